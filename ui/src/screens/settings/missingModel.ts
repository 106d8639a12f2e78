import type { ProfileModel } from "../../bindings";

/** The model of `profile` when it is missing (deleted, never installed, a path with no file),
 * from the settings' profile models; null when it has its model or runs elsewhere. (`?`: a
 * view from an older shell, or a test's, may not carry them.) */
export function missingModelOf(
  profileModels: readonly ProfileModel[] | undefined,
  profile: string,
): ProfileModel | null {
  return profileModels?.find((m) => m.profile === profile && m.missing !== null) ?? null;
}

/** What is missing, in words: the profile names `model`, which `missing` says is not there. */
export function missingModelText(missing: ProfileModel, model: string): string {
  return missing.missing === "file_not_found"
    ? `its model file ${model} is not there`
    : `its model “${model}” is not installed (deleted, or never downloaded)`;
}

/** What sending to a profile without its model says instead of starting a run. */
export function noModelToSend(missing: ProfileModel, model: string): string {
  return `The profile “${missing.profile}” has no model: ${missingModelText(missing, model)}. Pick another model for it in Settings, or get one in Models, then send again.`;
}
