import { useId, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';
import { api } from '../session.ts';
import { ErrorNote, formatBytes, Progress } from '../ui.tsx';
import {
  deployFolder,
  filesFromDrop,
  filesFromInput,
  incompleteSiteReason,
  type DeployProgress,
  type DeployTarget,
  type PickedFile,
} from '../upload.ts';

function progressCount(p: DeployProgress): string {
  if (p.phase === 'uploading') return ` (${formatBytes(p.done)} of ${formatBytes(p.total)})`;
  if (p.phase === 'hashing') return ` (${p.done} of ${p.total})`;
  return '';
}

const PHASE: Record<DeployProgress['phase'], string> = {
  hashing: 'Hashing files in your browser',
  uploading: 'Sending the files the platform does not hold yet',
  publishing: 'Publishing',
  done: 'Published',
};

type Deployed = { project_id: string; deployment_id: string; url: string };

/**
 * Deploys a folder dropped on it, or picked with its button (the keyboard's
 * way in). `target` may refuse to start (a new project needs its name).
 */
export function DropZone(props: { target: () => DeployTarget | null; onDeployed: (result: Deployed) => void; label: string }) {
  const id = useId();
  const upload = useFolderDeploy(props.target, props.onDeployed);
  return (
    <section aria-labelledby={`${id}-title`} class="drop-section">
      <h2 id={`${id}-title`}>{props.label}</h2>
      <FolderDrop id={id} busy={upload.busy} deploy={upload.deploy} />
      <DeployStatus progress={upload.progress} error={upload.error} fields={upload.fields} />
    </section>
  );
}

/** The upload's state: its progress, the sentence of a refusal or failure, and the fields the API named. */
function useFolderDeploy(target: () => DeployTarget | null, onDeployed: (result: Deployed) => void) {
  const [progress, setProgress] = useState<DeployProgress | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});

  async function deploy(files: PickedFile[]) {
    setError(null);
    setFields({});
    const chosen = target();
    if (!chosen) return;
    if (files.length === 0) return setError('The folder is empty: drop a folder with an index.html.');
    try {
      const incomplete = await incompleteSiteReason(files);
      if (incomplete) return setError(incomplete);
      const result = await deployFolder(api, chosen, files, setProgress);
      onDeployed(result);
    } catch (e) {
      setProgress(null);
      setError(e instanceof ApiError ? e.message : 'Reading the folder failed. Try again, or pick it with the button.');
      if (e instanceof ApiError) setFields(e.fields);
    }
  }

  const busy = progress !== null && progress.phase !== 'done';
  return { progress, error, fields, busy, deploy };
}

/** Where a folder is dropped, or picked with the folder input. */
function FolderDrop(props: { id: string; busy: boolean; deploy: (files: PickedFile[]) => Promise<void> }) {
  const { id, busy, deploy } = props;
  const [over, setOver] = useState(false);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: dropping is the pointer's way; the file and folder inputs inside are the keyboard's
    <div
      class={`drop-zone${over ? ' over' : ''}`}
      data-testid="drop-zone"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={async (e) => {
        e.preventDefault();
        setOver(false);
        if (!busy && e.dataTransfer) await deploy(await filesFromDrop(e.dataTransfer));
      }}
    >
      <p>Drop your site's folder here (its index.html at the top), or</p>
      <input
        id={`${id}-pick`}
        class="visually-hidden"
        type="file"
        // An attribute, not a property: Preact would set the property to "", which turns the folder picker off.
        ref={(input) => input?.setAttribute('webkitdirectory', '')}
        multiple
        disabled={busy}
        onChange={async (e) => {
          const input = e.target as HTMLInputElement;
          if (input.files) await deploy(filesFromInput(input.files));
          input.value = '';
        }}
      />
      {/* After the input: its focus ring is drawn on this label (input:focus-visible + label). */}
      <label for={`${id}-pick`} class="button-like">
        Choose a folder
      </label>
    </div>
  );
}

/** The upload's progress bar, and what went wrong: the sentence, then each field the API named. */
function DeployStatus(props: { progress: DeployProgress | null; error: string | null; fields: Record<string, string> }) {
  const { progress, error, fields } = props;
  return (
    <>
      {progress && (
        <Progress
          label={`${PHASE[progress.phase]}${progressCount(progress)}`}
          value={progress.phase === 'done' ? 1 : progress.done}
          max={progress.phase === 'done' ? 1 : progress.total}
        />
      )}
      <ErrorNote error={error} />
      {Object.keys(fields).length > 0 && (
        <ul class="field-errors">
          {Object.entries(fields).map(([name, sentence]) => (
            <li key={name}>
              {name}: {sentence}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
