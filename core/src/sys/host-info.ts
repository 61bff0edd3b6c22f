/**
 * sys/host-info: the host the server runs on, in Vault's shape (the field
 * names of gopsutil, which Vault returns): cpu, cpu_times, disk, host, memory
 * and timestamp. From node:os and, on Linux, /proc; a field the host does not
 * expose is 0 or empty, never an error: the endpoint is for diagnosis.
 */
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import os from 'node:os';

/** The kernel's clock ticks per second in /proc/stat (USER_HZ, 100 on every Linux Node runs on). */
const USER_HZ = 100;

const readText = (path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

/** `key: value` lines (/proc/cpuinfo blocks, /proc/meminfo). */
function fields(text: string, sep: RegExp): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.search(sep);
    if (i > 0) m.set(line.slice(0, i).trim(), line.slice(i).replace(sep, '').trim());
  }
  return m;
}

function cpuInfo() {
  const blocks = readText('/proc/cpuinfo').split(/\n\s*\n/).filter((b) => b.trim()).map((b) => fields(b, /\s*:\s?/));
  return os.cpus().map((c, i) => {
    const b = blocks[i] ?? new Map<string, string>();
    const num = (k: string) => Number.parseInt(b.get(k) ?? '0', 10) || 0;
    return {
      cpu: i,
      vendorId: b.get('vendor_id') ?? '',
      family: b.get('cpu family') ?? '',
      model: b.get('model') ?? '',
      stepping: num('stepping'),
      physicalId: b.get('physical id') ?? '',
      coreId: b.get('core id') ?? '',
      cores: 1,
      modelName: c.model,
      mhz: c.speed || Number.parseFloat(b.get('cpu MHz') ?? '0') || 0,
      cacheSize: Number.parseInt(b.get('cache size') ?? '0', 10) || 0,
      flags: (b.get('flags') ?? '').split(/\s+/).filter(Boolean),
      microcode: b.get('microcode') ?? '',
    };
  });
}

/** Seconds per CPU: /proc/stat's ticks on Linux, else node:os's milliseconds. */
function cpuTimes() {
  const stat = readText('/proc/stat')
    .split('\n')
    .filter((l) => /^cpu\d+ /.test(l));
  if (stat.length) {
    return stat.map((line) => {
      const [name, ...v] = line.trim().split(/\s+/);
      const t = (i: number) => (Number(v[i] ?? 0) || 0) / USER_HZ;
      return { cpu: name!, user: t(0), system: t(2), idle: t(3), nice: t(1), iowait: t(4), irq: t(5), softirq: t(6), steal: t(7), guest: t(8), guestNice: t(9) };
    });
  }
  return os.cpus().map((c, i) => ({ cpu: `cpu${i}`, user: c.times.user / 1000, system: c.times.sys / 1000, idle: c.times.idle / 1000, nice: c.times.nice / 1000, iowait: 0, irq: c.times.irq / 1000, softirq: 0, steal: 0, guest: 0, guestNice: 0 }));
}

/** Every mounted block device's filesystem (as Vault lists physical partitions), and / at least. */
function disks(extraPaths: string[]) {
  const mounts = readText('/proc/mounts')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((p) => p.length > 2 && p[0]!.startsWith('/dev/'))
    .map((p) => ({ path: p[1]!.replace(/\\040/g, ' '), fstype: p[2]! }));
  const seen = new Set<string>();
  const out = [];
  for (const m of [...mounts, { path: '/', fstype: '' }, ...extraPaths.map((path) => ({ path, fstype: '' }))]) {
    let s;
    try {
      s = statfsSync(m.path);
    } catch {
      continue;
    }
    // Two mounts of one filesystem (bind mounts) are one disk.
    const id = `${s.type}:${s.blocks}:${s.files}:${s.bfree}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const total = s.blocks * s.bsize;
    const free = s.bavail * s.bsize;
    const used = (s.blocks - s.bfree) * s.bsize;
    const inodesUsed = s.files - s.ffree;
    out.push({
      path: m.path,
      fstype: m.fstype,
      total,
      free,
      used,
      usedPercent: used + free > 0 ? (used / (used + free)) * 100 : 0,
      inodesTotal: s.files,
      inodesUsed,
      inodesFree: s.ffree,
      inodesUsedPercent: s.files > 0 ? (inodesUsed / s.files) * 100 : 0,
    });
  }
  return out;
}

function host() {
  const release = fields(readText('/etc/os-release'), /=/);
  const unquote = (v: string | undefined) => (v ?? '').replace(/^"|"$/g, '');
  const uptime = Math.floor(os.uptime());
  let procs = 0;
  try {
    procs = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).length;
  } catch {
    procs = 0;
  }
  return {
    hostname: os.hostname(),
    uptime,
    bootTime: Math.floor(Date.now() / 1000) - uptime,
    procs,
    os: process.platform,
    platform: unquote(release.get('ID')),
    platformFamily: unquote(release.get('ID_LIKE')) || unquote(release.get('ID')),
    platformVersion: unquote(release.get('VERSION_ID')),
    kernelVersion: os.release(),
    kernelArch: os.machine(),
    virtualizationSystem: '',
    virtualizationRole: '',
    hostId: readText('/etc/machine-id').trim(),
  };
}

function memory() {
  const info = fields(readText('/proc/meminfo'), /:\s*/);
  const kb = (k: string) => (Number.parseInt(info.get(k) ?? '0', 10) || 0) * 1024;
  const total = os.totalmem();
  const free = os.freemem();
  const available = info.has('MemAvailable') ? kb('MemAvailable') : free;
  const used = total - available;
  return {
    total,
    available,
    used,
    usedPercent: total > 0 ? (used / total) * 100 : 0,
    free: info.has('MemFree') ? kb('MemFree') : free,
    active: kb('Active'),
    inactive: kb('Inactive'),
    buffers: kb('Buffers'),
    cached: kb('Cached'),
    shared: kb('Shmem'),
    slab: kb('Slab'),
    swapTotal: kb('SwapTotal'),
    swapFree: kb('SwapFree'),
    swapCached: kb('SwapCached'),
    dirty: kb('Dirty'),
    writeBack: kb('Writeback'),
    mapped: kb('Mapped'),
    pageTables: kb('PageTables'),
    commitLimit: kb('CommitLimit'),
    committedAS: kb('Committed_AS'),
    hugePagesTotal: Number.parseInt(info.get('HugePages_Total') ?? '0', 10) || 0,
    hugePagesFree: Number.parseInt(info.get('HugePages_Free') ?? '0', 10) || 0,
    hugePageSize: kb('Hugepagesize'),
  };
}

/** The whole answer; `extraPaths` (the storage directory) are listed among the disks when on another filesystem. */
export function hostInfo(extraPaths: string[] = []) {
  return { cpu: cpuInfo(), cpu_times: cpuTimes(), disk: disks(extraPaths), host: host(), memory: memory(), timestamp: new Date().toISOString() };
}
