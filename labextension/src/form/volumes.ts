import { matches, VOLUMES } from '../contract';
import type { IFieldError } from './errors';
import { isQuantity, Parsed } from './values';

/**
 * The Storage fields read as the server reads them
 * (`kale_ext/job/volumes.py`: parse_volume, check_mount, check_mounts;
 * `kale_ext/job/outputs.py`: parse_outputs), with the kinds, the forms and
 * kale_ext's own mount paths from the generated contract.
 */

/**
 * One volume short form, read.
 */
export interface IShortVolume {
  kind: string;
  /** The claim, Secret or ConfigMap (null for an emptydir). */
  name: string | null;
  /** As given (normalised): absolute, or relative to the working directory. */
  mount: string;
  readOnly: boolean;
  /** An emptydir's size limit. */
  size: string | null;
  /** The folder that stands for it in a local run (`=LOCAL_DIR`). */
  local: string | null;
}

/**
 * The outputs volume: a PersistentVolumeClaim and where it is mounted.
 */
export interface IOutputsVolume {
  claim: string;
  mount: string;
}

/**
 * What a form needs for its Storage checks.
 */
export interface IStorageFields {
  volumes: string[];
  shmSize: string;
  outputs: string;
}

/**
 * The short form of one kind, for messages.
 */
export function kindForm(kind: string): string {
  return kind === 'pvc'
    ? 'pvc:NAME:/mount[:ro]'
    : kind === 'emptydir'
      ? 'emptydir:/mount[:SIZE]'
      : `${kind}:NAME:/mount`;
}

/**
 * Read one volume short form, e.g. `pvc:data:/data:ro=./data`.
 */
export function parseVolume(text: string): Parsed<IShortVolume> {
  const t = text.trim();
  const fail = (error: string) => ({ ok: false as const, error });
  if (!t) {
    return fail(`enter a volume: ${VOLUMES.forms}`);
  }
  const eq = t.indexOf('=');
  const spec = eq < 0 ? t : t.slice(0, eq);
  const local = eq < 0 ? '' : t.slice(eq + 1);
  const parts = spec.split(':');
  const kind = parts[0].toLowerCase();
  if (!VOLUMES.kinds.includes(kind)) {
    return fail(`"${parts[0]}" is not a volume kind: write ${VOLUMES.forms}`);
  }
  if (kind === 'emptydir') {
    if (parts.length !== 2 && parts.length !== 3) {
      return fail(`write ${kindForm(kind)}`);
    }
    if (eq >= 0) {
      return fail('an emptydir is a scratch folder: it takes no =LOCAL_DIR');
    }
    const size = parts.length === 3 ? parts[2] : null;
    if (size !== null && !isQuantity(size)) {
      return fail(`"${size}" is not a size (e.g. 1Gi)`);
    }
    const mount = checkMount(parts[1]);
    return mount.ok
      ? {
          ok: true,
          value: {
            kind,
            name: null,
            mount: mount.value,
            readOnly: false,
            size,
            local: null
          }
        }
      : mount;
  }
  const readOnly = parts.length === 4;
  if (
    (parts.length !== 3 && !readOnly) ||
    (readOnly && (kind !== 'pvc' || parts[3] !== 'ro'))
  ) {
    return fail(`write ${kindForm(kind)} (and =LOCAL_DIR for local runs)`);
  }
  const name = parts[1];
  if (!matches('dns_subdomain', name)) {
    return fail(
      `"${name}" is not a Kubernetes object name (lowercase letters, digits, - and .)`
    );
  }
  if (eq >= 0 && !local.trim()) {
    return fail('after = give the local folder that stands for it');
  }
  const mount = checkMount(parts[2]);
  return mount.ok
    ? {
        ok: true,
        value: {
          kind,
          name,
          mount: mount.value,
          readOnly,
          size: null,
          local: local.trim() || null
        }
      }
    : mount;
}

/**
 * The volumes sent to the server: those that read (a bad one is reported
 * as typed, and left out so the rest still preview), with their rows.
 */
export function sentVolumes(
  volumes: string[]
): { index: number; text: string }[] {
  return volumes
    .map((text, index) => ({ index, text: text.trim() }))
    .filter(v => parseVolume(v.text).ok);
}

/**
 * A mount path: absolute, or relative to the working directory; no `..`;
 * normalised (`/data/` → `/data`).
 */
export function checkMount(path: string): Parsed<string> {
  if (!path.trim()) {
    return { ok: false, error: 'give the folder to mount it at, e.g. /data' };
  }
  const clean = normalise(path);
  if (path.split('/').includes('..') || clean === '/' || clean === '.') {
    return {
      ok: false,
      error: `"${path}" is not a folder to mount a volume at`
    };
  }
  return { ok: true, value: clean };
}

/**
 * Where a mount lands on a cluster: a relative one is under the working
 * directory.
 */
export function clusterPath(mount: string): string {
  return mount.startsWith('/') ? mount : `${VOLUMES.workdir}/${mount}`;
}

/**
 * Read the outputs volume, `pvc:NAME` or `pvc:NAME:/mount`; '' is none.
 */
export function parseOutputs(text: string): Parsed<IOutputsVolume | undefined> {
  const t = text.trim();
  if (!t) {
    return { ok: true, value: undefined };
  }
  const m = /^pvc:([^:]+)(:(\/[^:]*))?$/.exec(t);
  if (!m) {
    return {
      ok: false,
      error: `"${t}" is not pvc:NAME or pvc:NAME:/mount (a PersistentVolumeClaim)`
    };
  }
  const [, claim, , mount = VOLUMES.outputs_mount] = m;
  if (!matches('dns_subdomain', claim)) {
    return {
      ok: false,
      error: `"${claim}" is not a PersistentVolumeClaim name`
    };
  }
  if (mount === '/' || `${mount}/`.includes('/../') || mount.includes('//')) {
    return {
      ok: false,
      error: `"${mount}" is not a folder to mount a volume at`
    };
  }
  return { ok: true, value: { claim, mount: mount.replace(/\/+$/, '') } };
}

/**
 * Every problem of the Storage fields: each volume as typed, mounts that
 * collide (with each other, the outputs volume, /dev/shm, the working
 * directory), a shm size that is not a quantity, the outputs volume; on the
 * Local backend, a volume with no local folder standing for it.
 */
export function storageErrors(
  form: IStorageFields,
  local: boolean
): IFieldError[] {
  const errors: IFieldError[] = [];
  const add = (field: string, message: string) =>
    errors.push({ field, message });
  const taken = new Map<string, string>();
  const outputs = parseOutputs(form.outputs);
  if (!outputs.ok) {
    add('outputs', outputs.error);
  } else if (outputs.value) {
    taken.set(outputs.value.mount, 'the outputs volume');
  }
  const shm = form.shmSize.trim();
  if (shm && !isQuantity(shm)) {
    add('shmSize', `"${shm}" is not a size (e.g. 2Gi)`);
  } else if (shm) {
    taken.set(VOLUMES.shm_mount, `/dev/shm (shm size ${shm})`);
  }
  form.volumes.forEach((text, i) => {
    const field = `volumes.${i}`;
    const parsed = parseVolume(text);
    if (!parsed.ok) {
      add(field, parsed.error);
      return;
    }
    const { kind, name, mount, local: folder } = parsed.value;
    const path = clusterPath(mount);
    const workdir = VOLUMES.workdir;
    if (
      mount.startsWith('/') &&
      (inside(workdir, mount) || inside(mount, workdir))
    ) {
      add(
        field,
        `${mount} is kale_ext's working directory on a cluster: mount relatively (data, not ${workdir}/data)`
      );
      return;
    }
    for (const [other, what] of taken) {
      if (inside(path, other) || inside(other, path)) {
        add(
          field,
          `${mount} ${path === other ? 'is' : 'collides with'} ${what}`
        );
        return;
      }
    }
    taken.set(path, `volume ${i + 1} (${mount})`);
    if (local && kind !== 'emptydir' && !folder) {
      add(
        field,
        `a ${kind} exists only on a cluster: add =DIR, the folder that stands for it here (${kind}:${name}:${mount}=./${name})`
      );
    }
  });
  return errors;
}

function inside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(`${folder.replace(/\/+$/, '')}/`);
}

/**
 * `posixpath.normpath` for mount paths: no empty or `.` parts, no trailing
 * slash.
 */
function normalise(path: string): string {
  const absolute = path.startsWith('/');
  const parts = path.split('/').filter(p => p !== '' && p !== '.');
  const joined = parts.join('/');
  return absolute ? `/${joined}` : joined || '.';
}
