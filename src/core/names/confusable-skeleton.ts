/**
 * The confusable skeleton of a name (Unicode Technical Standard #39, section 4 "Confusable
 * Detection"): two names that look alike to a person have the same skeleton. `NHS Triage` and
 * `NНS Тriage` (Cyrillic Н and Т) share one; so do `rn` and `m`. Registries compare names by it, so a
 * look-alike cannot pass for another name of the same organisation (docs/api.md, "Names").
 *
 * skeleton(X) = NFD(map each character of NFD(X), without its default-ignorable code points, to its
 * prototype in the confusables table). The table is Unicode's `confusables.txt` as the `unhomoglyph`
 * package ships it (nodeca, MIT; Unicode 13.0.0, decisions.md "2026-12-01"), read once.
 *
 * The skeleton is for comparing, never for showing: it is not meant to be read (`m` becomes `rn`).
 */
import unhomoglyph from 'unhomoglyph';

/** Code points UTS #39 drops before mapping: they render as nothing. */
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/** The UTS #39 skeleton of `name`. Deterministic for a given table: stored skeletons stay comparable. */
export function confusableSkeleton(name: string): string {
  const decomposed = name.normalize('NFD').replace(DEFAULT_IGNORABLE, '');
  return unhomoglyph(decomposed).normalize('NFD');
}
