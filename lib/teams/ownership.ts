import { refusedAt, TransactionRefused, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { MEMBER_NOT_FOUND, OWNERSHIP_TRANSFER_CONFLICT, OWNERSHIP_TRANSFER_TO_SELF } from '../errors/catalogue/accounts.ts';
import { getMembership, ownershipMove } from './membership-records.ts';

/**
 * Moves a team's ownership from `currentOwnerId` to another admin or member;
 * the previous owner becomes admin. One transaction whose conditions re-check
 * both rows (the caller still owns the team, the target is still an admin or
 * member), so a team never has zero or two owners: of two racing transfers
 * the second finds the caller no longer owner and is refused with 409.
 */
export async function transferOwnership(teamId: string, currentOwnerId: string, newOwnerId: string): Promise<void> {
  if (newOwnerId === currentOwnerId) throw new ApiError(OWNERSHIP_TRANSFER_TO_SELF);
  const target = await getMembership(teamId, newOwnerId);
  // The owner row of the team is the caller's (the route demands role owner), so any other owner row is a race.
  if (!target) throw new ApiError(MEMBER_NOT_FOUND, { details: { new_owner_id: newOwnerId } });
  if (target.role === 'owner') throw new ApiError(OWNERSHIP_TRANSFER_CONFLICT);

  try {
    await transact(ownershipMove(teamId, currentOwnerId, newOwnerId, new Date().toISOString()));
  } catch (error) {
    if (!(error instanceof TransactionRefused) && (error as Error).name !== 'TransactionConflictException') throw error;
    // The target left the team while we ran: the same answer as if it had never been there.
    if (refusedAt(error, 'new_owner') && !refusedAt(error, 'old_owner')) {
      if (!(await getMembership(teamId, newOwnerId))) throw new ApiError(MEMBER_NOT_FOUND, { details: { new_owner_id: newOwnerId } });
    }
    throw new ApiError(OWNERSHIP_TRANSFER_CONFLICT);
  }
}
