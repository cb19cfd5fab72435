// `strato preview image`: a base image made from this machine's own Python (interpreter, standard library and the
// shared libraries ldd lists), imported into the local engine like `docker import`; no registry is needed.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as tar from 'tar';
import { baseImageName } from '../build/manifest';
import { checkImage } from '../catalog/parameterRules';
import { buildImage, DockerEngine, importImage } from '../containers';
import { UserError } from '../util/errors';

const run = promisify(execFile);

/**
 * Standard-library parts a worker never needs; leaving them out keeps the image near 50 MB. Packages installed into
 * this Python (site-packages, Debian's dist-packages) stay out too: in the image they would hide a dependency the
 * project does not declare. The worker runtime (the strato package) comes with the build, in /app/deps.
 */
const SKIP = /\/(test|tests|idlelib|tkinter|turtledemo|ensurepip|lib2to3|config-[^/]+|site-packages|dist-packages)(\/|$)/;
/** Loaded at run time (pthread cancellation, C++ extensions), so ldd does not list them. */
const EXTRA_LIBS = ['libgcc_s.so.1', 'libstdc++.so.6'];
const CA_FILES = ['/etc/ssl/certs/ca-certificates.crt'];

export interface BaseImageResult {
  tags: string[];
  python: string;
  pythonVersion: string;
  files: number;
  sizeBytes: number;
  ms: number;
}

interface PythonLayout {
  executable: string;
  version: string;
  stdlib: string;
  dynload: string;
}

async function inspectPython(python: string): Promise<PythonLayout> {
  const code =
    'import sys,sysconfig,os;print(os.path.realpath(sys.executable));print("%d.%d"%sys.version_info[:2]);p=sysconfig.get_paths();print(p["stdlib"]);print(os.path.join(p["platstdlib"],"lib-dynload"))';
  try {
    const { stdout } = await run(python, ['-S', '-c', code]);
    const [executable, version, stdlib, dynload] = stdout.trim().split('\n');
    return { executable, version, stdlib, dynload };
  } catch (e) {
    throw new UserError(
      `cannot run ${python} to copy it into the image (${(e as Error).message.split('\n')[0]}): pass --python with the path of a Python 3 interpreter.`,
    );
  }
}

/**
 * An image name the user gave (a flag, a variable), checked with the rule `image=` follows (catalog/parameterRules.ts)
 * before anything is built; `where` says which one it was. `digest: false`: the name of an image to make.
 */
export function checkImageName(name: string, where: string, o: { digest?: boolean } = {}): string {
  const checked = checkImage(name);
  // A name the preview makes (`strato preview image --tag`) is a tag: a digest (@sha256:...) names what exists.
  if (checked.ok && (o.digest !== false || !name.includes('@'))) return checked.value;
  throw new UserError(
    `${where} ${JSON.stringify(name)} is not an image name: use lowercase repository names and an optional tag, such as ` +
      'strato-base-cpu:py3.11 or registry.local:5000/team/base:1',
  );
}

/** Shared libraries (and the loader) the interpreter and its extension modules need. */
async function sharedLibraries(files: string[]): Promise<string[]> {
  const found = new Set<string>();
  for (let i = 0; i < files.length; i += 50) {
    const { stdout } = await run('ldd', files.slice(i, i + 50)).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
    for (const line of stdout.split('\n')) {
      const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
      if (m) found.add(m[1]);
    }
  }
  const dirs = [...new Set([...found].map((f) => path.dirname(f)))];
  for (const lib of EXTRA_LIBS) {
    const at = dirs.map((d) => path.join(d, lib)).find((p) => fs.existsSync(p));
    if (at) found.add(at);
  }
  return [...found];
}

/** A staging tree of symlinks to the host's files; the tar follows them, so nothing is copied twice. */
function stage(dir: string, layout: PythonLayout, libs: string[]): void {
  const link = (hostPath: string, inImage = hostPath) => {
    const at = path.join(dir, inImage);
    if (fs.existsSync(at)) return;
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.symlinkSync(hostPath, at);
  };
  link(layout.executable);
  for (const alias of ['/usr/bin/python3', '/usr/local/bin/python3']) link(layout.executable, alias);
  link(layout.stdlib);
  if (!layout.dynload.startsWith(layout.stdlib + path.sep)) link(layout.dynload);
  for (const lib of libs) link(lib);
  for (const f of CA_FILES) if (fs.existsSync(f)) link(f);
  fs.mkdirSync(path.join(dir, 'etc'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n');
  fs.writeFileSync(path.join(dir, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
  for (const d of ['tmp', 'root', 'app']) fs.mkdirSync(path.join(dir, d), { recursive: true, mode: 0o1777 });
}

/** Builds the base image from `python` and tags it with every name in `tags`. */
export async function buildBaseImage(o: {
  /** Default: the CPU and GPU base images a preview with this Python looks for. */
  tags?: string[];
  python?: string;
  engine?: DockerEngine;
  onProgress?: (m: string) => void;
}): Promise<BaseImageResult> {
  const t0 = Date.now();
  const python = o.python ?? '/usr/bin/python3';
  const layout = await inspectPython(python);
  const engine = o.engine ?? (await new DockerEngine().connect());
  o.onProgress?.(`collecting Python ${layout.version} from ${layout.executable}`);
  const dynloadFiles = fs.existsSync(layout.dynload)
    ? fs
        .readdirSync(layout.dynload)
        .filter((f) => f.endsWith('.so'))
        .map((f) => path.join(layout.dynload, f))
    : [];
  const libs = await sharedLibraries([layout.executable, ...dynloadFiles]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-image-'));
  try {
    stage(dir, layout, libs);
    let files = 0;
    let sizeBytes = 0;
    const stream = tar.c(
      {
        cwd: dir,
        follow: true,
        portable: true,
        filter: (p, st) => {
          if (SKIP.test(p) && p.startsWith(`.${layout.stdlib}`)) return false;
          files++;
          sizeBytes += 'size' in st ? st.size : 0;
          return true;
        },
      },
      fs.readdirSync(dir).map((e) => `./${e}`),
    );
    const tags = o.tags?.length ? o.tags : [baseImageName('cpu', layout.version), baseImageName('gpu', layout.version)];
    const [first, ...rest] = tags;
    o.onProgress?.(`importing ${first}`);
    const caBundle = CA_FILES.find((f) => fs.existsSync(f));
    await importImage(engine, first, stream as unknown as NodeJS.ReadableStream, [
      'ENV PATH=/usr/local/bin:/usr/bin:/bin',
      'ENV LANG=C.UTF-8',
      // OpenSSL looks for its CAs under its own directory (/usr/lib/ssl), which the image has not: HTTPS from a worker
      // would fail to verify every certificate. The bundle copied in is named instead.
      ...(caBundle ? [`ENV SSL_CERT_FILE=${caBundle}`] : []),
      'WORKDIR /app',
      'CMD ["python3"]',
    ]);
    for (const tag of rest) {
      const at = tag.lastIndexOf(':');
      const [repo, t] = at > tag.lastIndexOf('/') ? [tag.slice(0, at), tag.slice(at + 1)] : [tag, 'latest'];
      await engine.call('POST', `/images/${encodeURIComponent(first)}/tag?repo=${encodeURIComponent(repo)}&tag=${encodeURIComponent(t)}`);
    }
    return { tags, python: layout.executable, pythonVersion: layout.version, files, sizeBytes, ms: Date.now() - t0 };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Package files a worker never needs. */
const PACKAGE_SKIP = /^\/usr\/share\/(doc|man|info|locale|lintian|bug|bash-completion)\//;

/** The image an endpoint with `system_dependencies` runs in: its base image plus those packages (a derived tag). */
export function packageImageTag(base: string, packages: readonly string[]): string {
  const hash = createHash('sha256')
    .update([...packages].sort().join('\n'))
    .digest('hex')
    .slice(0, 12);
  return `${base}-sys-${hash}`;
}

/**
 * `system_dependencies` in a preview image: the base image has no package manager (it is made from this machine's
 * Python), so the packages' files come from this machine, as the base image's do (`dpkg -L`, plus the shared
 * libraries their programs load), in a layer over the base image. A package this machine lacks is named.
 */
export async function buildPackageImage(o: { engine: DockerEngine; base: string; tag: string; packages: readonly string[]; endpoint: string }): Promise<void> {
  const files: string[] = [];
  for (const pkg of o.packages) {
    const listed = await run('dpkg', ['-L', pkg.split('=')[0]]).catch(() => null);
    if (!listed)
      throw new UserError(
        `system_dependencies ${pkg} of endpoint ${o.endpoint} is not installed on this machine, and preview images take packages from this machine: ` +
          `install it (apt-get install ${pkg.split('=')[0]}) and start the preview again.`,
      );
    for (const f of listed.stdout.split('\n')) {
      if (!f.startsWith('/') || PACKAGE_SKIP.test(f)) continue;
      const st = fs.lstatSync(f, { throwIfNoEntry: false });
      if (st && (st.isFile() || st.isSymbolicLink())) files.push(f);
    }
  }
  const elf = files.filter((f) => {
    try {
      const fd = fs.openSync(f, 'r');
      const head = Buffer.alloc(4);
      fs.readSync(fd, head, 0, 4, 0);
      fs.closeSync(fd);
      return head.toString('latin1') === '\x7fELF';
    } catch {
      return false;
    }
  });
  const libs = await sharedLibraries(elf);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-image-'));
  try {
    for (const f of [...files, ...libs]) {
      const at = path.join(dir, 'rootfs', f);
      if (fs.existsSync(at)) continue;
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.symlinkSync(f, at);
    }
    fs.writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${o.base}\nCOPY rootfs/ /\n`);
    const context = tar.c({ cwd: dir, follow: true, portable: true }, ['Dockerfile', 'rootfs']);
    await buildImage(o.engine, o.tag, context as unknown as NodeJS.ReadableStream);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
