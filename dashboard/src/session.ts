import { useEffect, useState } from 'preact/hooks';
import { createApiClient, type ApiClient } from './api.ts';
import type { Me, MyTeam } from './api-types.ts';

export interface Session {
  me: Me | null;
  teams: MyTeam[];
  /** The team the console acts in (X-Team-Id). */
  team: MyTeam | null;
  loading: boolean;
}

/** Which team was picked last: not a secret (the session itself stays in the HttpOnly cookie). */
const TEAM_KEY = 'slipway.team';

let state: Session = { me: null, teams: [], team: null, loading: true };
const listeners = new Set<(s: Session) => void>();

function set(next: Partial<Session>) {
  state = { ...state, ...next };
  for (const listener of listeners) listener(state);
}

export const api: ApiClient = createApiClient({ currentTeam: () => state.team?.id ?? null });

export function useSession(): Session {
  const [value, setValue] = useState(state);
  useEffect(() => {
    listeners.add(setValue);
    setValue(state);
    return () => void listeners.delete(setValue);
  }, []);
  return value;
}

/** Reads who is signed in and their teams; signed out (401) leaves `me` null. */
export async function loadSession(): Promise<void> {
  set({ loading: true });
  try {
    const [me, teams] = await Promise.all([api.get<Me>('/me', { team: null }), api.get<MyTeam[]>('/me/teams', { team: null })]);
    const wanted = localStorage.getItem(TEAM_KEY) ?? me.default_team_id;
    const team = teams.find((t) => t.id === wanted) ?? teams.find((t) => t.id === me.default_team_id) ?? teams[0] ?? null;
    set({ me, teams, team, loading: false });
  } catch {
    set({ me: null, teams: [], team: null, loading: false });
  }
}

export function chooseTeam(teamId: string): void {
  const team = state.teams.find((t) => t.id === teamId) ?? null;
  if (team) localStorage.setItem(TEAM_KEY, team.id);
  set({ team });
}

export async function signOut(): Promise<void> {
  await api.post('/auth/sign-out', {}, { team: null });
  set({ me: null, teams: [], team: null });
}

export const canAdmin = (s: Session) => s.team?.role === 'owner' || s.team?.role === 'admin';
