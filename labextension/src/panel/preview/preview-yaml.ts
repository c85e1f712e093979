/**
 * The TrainJob YAML as the preview shows it: readable first, with its bulk
 * folded away. A long block of text (the bootstrap script) and a very long
 * value (the compressed function) each become a fold the user can open;
 * everything else shows as it is. Copying and downloading take the YAML as
 * it is, unfolded.
 */

/**
 * A piece of the YAML: shown as it is, or folded behind a label.
 */
export type YamlPiece =
  | { kind: 'text'; text: string }
  | { kind: 'fold'; label: string; text: string };

/**
 * Fold a block of more than this many lines.
 */
export const FOLD_LINES = 8;

/**
 * Fold a value longer than this many characters.
 */
export const FOLD_CHARS = 160;

/**
 * A block scalar's first line: `key: |`, `- |`, `- >-`, ...
 */
const BLOCK = /^(\s*)(?:- |[^\s:#][^:#]*: )*[|>][-+0-9]*\s*$/;

/**
 * A line's indentation and its `- ` or `key: ` marker, the value after it.
 */
const VALUE = /^(\s*(?:- |[^\s:#'"][^:#]*: )*)(.*)$/;

/**
 * The pieces of `yaml`, in order; joined, their texts are `yaml` again.
 */
export function foldYaml(yaml: string): YamlPiece[] {
  const lines = yaml.split('\n');
  const pieces: YamlPiece[] = [];
  const text = (t: string) => {
    const last = pieces[pieces.length - 1];
    if (last?.kind === 'text') {
      last.text += t;
    } else {
      pieces.push({ kind: 'text', text: t });
    }
  };
  const end = (i: number) => (i < lines.length - 1 ? '\n' : '');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const block = BLOCK.exec(line);
    if (block) {
      const indent = block[1].length;
      let j = i + 1;
      while (
        j < lines.length &&
        (lines[j].trim() === '' || Private.indent(lines[j]) > indent)
      ) {
        j++;
      }
      while (j > i + 1 && lines[j - 1].trim() === '') {
        j--; // trailing blank lines are not the block's
      }
      const body = lines.slice(i + 1, j);
      if (body.length > FOLD_LINES) {
        text(line + '\n');
        pieces.push({
          kind: 'fold',
          label: `${body.length} lines`,
          text: body.join('\n') + end(j - 1)
        });
        i = j - 1;
        continue;
      }
    }
    if (line.length > FOLD_CHARS) {
      const [, head, value] = VALUE.exec(line)!;
      text(head);
      pieces.push({
        kind: 'fold',
        label: `${value.length.toLocaleString('en-US')} characters`,
        text: value + end(i)
      });
      continue;
    }
    text(line + end(i));
  }
  return pieces;
}

namespace Private {
  export function indent(line: string): number {
    return /^\s*/.exec(line)![0].length;
  }
}
