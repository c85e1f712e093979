/**
 * Cell tags as the tag editor sees them: a code cell has one kale_ext role,
 * so choosing one of the offered tags replaces the others; tags the editor
 * does not offer (Kale's `step:`, `limit:`, anyone else's) are kept.
 */

import type { Kale } from '../types';

/**
 * The tags the editor offers: one per role, named as the role
 * (`imports`, `functions`, `parameters`, `training`, `skip`, `distributed`).
 */
export function editorTags(grammar: Kale.ITag[]): Kale.ITag[] {
  return grammar.filter(t => t.role !== null && t.tag === t.role);
}

/**
 * The tags that give a cell its role, written as they are (Kale's
 * `pipeline-parameters` too; not patterns such as `step:<name>`). A cell has
 * one of them at most.
 */
export function roleTags(grammar: Kale.ITag[]): Kale.ITag[] {
  return grammar.filter(t => t.role !== null && /^[A-Za-z0-9_-]+$/.test(t.tag));
}

/**
 * The tags of a cell's `tags` metadata (anything else: none).
 */
export function cellTags(metadata: unknown): string[] {
  return Array.isArray(metadata)
    ? metadata.filter((t): t is string => typeof t === 'string')
    : [];
}

/**
 * The tags of `tags` that the editor offers, in the cell's order.
 */
export function offeredOn(tags: string[], offered: string[]): string[] {
  return tags.filter(t => offered.includes(t));
}

/**
 * The cell's tags with the role tag `tag` chosen in place of the other
 * offered tags; `null` chooses none (the cell untagged). Other tags stay.
 */
export function chooseRole(
  tags: string[],
  tag: string | null,
  offered: string[]
): string[] {
  const kept = tags.filter(t => !offered.includes(t));
  return tag === null ? kept : [...kept, tag];
}

/**
 * The role a cell's tags give it by the grammar (the first role tag's), or
 * null when none does.
 */
export function roleOf(tags: string[], grammar: Kale.ITag[]): string | null {
  const roles = roleTags(grammar);
  for (const t of tags) {
    const row = roles.find(r => r.tag === t);
    if (row) {
      return row.role;
    }
  }
  return null;
}

/**
 * The CSS class a tag gives its cell.
 */
export function tagClass(tag: string): string {
  return `kale-ext-tag-${tag.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}
