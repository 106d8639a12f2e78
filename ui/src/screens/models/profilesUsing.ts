import type { ProfileModel } from "../../bindings";

/** Profile names as people read a list of them: “Local”, “Coder”. */
function quoted(profiles: readonly string[]): string {
  return profiles.map((p) => `“${p}”`).join(", ");
}

/** The profiles that run the models folder's file `file`, in `models.yaml`'s order, from the
 * settings' profile models (absent: not known yet, none). */
export function profilesRunning(
  profileModels: readonly ProfileModel[] | undefined,
  file: string,
): string[] {
  return (profileModels ?? []).filter((m) => m.file === file).map((m) => m.profile);
}

/** What deleting a model means for the profiles that run it, said before (the confirmation,
 * as the engine's `profiles_note` says it); null when no profile runs it. */
export function profilesNote(profiles: readonly string[]): string | null {
  if (profiles.length === 0) return null;
  return profiles.length === 1
    ? `The profile ${quoted(profiles)} uses it; it will have no model until you pick another.`
    : `The profiles ${quoted(profiles)} use it; they will have no model until you pick another.`;
}

/** What deleting it did to them, said after, with where to pick another; null when no
 * profile ran it. */
export function profilesLeftNote(profiles: readonly string[]): string | null {
  if (profiles.length === 0) return null;
  return profiles.length === 1
    ? `The profile ${quoted(profiles)} used it; it has no model until you pick another in Settings.`
    : `The profiles ${quoted(profiles)} used it; they have no model until you pick another in Settings.`;
}
