import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { FileAccessError, UnsupportedFormatError } from '../core/errors.js';
import type { Image } from '../core/image.js';

/**
 * Video through Debian's ffmpeg as a child process: frames stream out as raw RGB (rgb24, the colour order
 * OpenCV's gray conversion is defined on) and stream in for annotated output. ffmpeg decodes in its own
 * process, ahead of the consumer: the frames it has produced wait in this process's buffer (a bounded number),
 * so decoding frame k+1 overlaps whatever is done with frame k.
 */

export const VIDEO_EXTENSIONS = ['.mp4', '.m4v', '.mkv', '.avi', '.mov', '.webm', '.mpg', '.mpeg', '.y4m', '.gif', '.ts'] as const;

/** A path ffmpeg reads as video: a video file, or a numbered frame sequence such as frames/%04d.png. */
export function isVideoPath(path: string): boolean {
  return path.includes('%') || (VIDEO_EXTENSIONS as readonly string[]).includes(extname(path).toLowerCase());
}

export interface VideoInfo {
  width: number;
  height: number;
  /** Frames per second (from the stream's frame rate), NaN when unknown. */
  fps: number;
  /** Frame count when the container states it. */
  frames?: number;
}

function run(cmd: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', (e: NodeJS.ErrnoException) => reject(e.code === 'ENOENT' ? new UnsupportedFormatError(`video needs ${cmd} (Debian: apt-get install ffmpeg)`) : e));
    p.on('close', (code) => resolve({ code: code ?? 1, out, err }));
  });
}

/** Width, height, frame rate and count of a video's first video stream (ffprobe). */
export async function probeVideo(path: string): Promise<VideoInfo> {
  if (!path.includes('%')) {
    const s = await stat(path).catch(() => undefined);
    if (!s) throw new FileAccessError(`no such file: ${path}`);
  }
  const r = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height,r_frame_rate,nb_frames', '-of', 'json', path]);
  let stream: Record<string, string | number> | undefined;
  try {
    stream = (JSON.parse(r.out) as { streams?: Record<string, string | number>[] }).streams?.[0];
  } catch { /* reported below */ }
  if (r.code !== 0 || !stream?.width) throw new UnsupportedFormatError(`${path}: not a readable video (${r.err.trim().split('\n').pop() || 'no video stream'})`);
  const [num, den] = String(stream.r_frame_rate ?? '').split('/').map(Number);
  const frames = Number(stream.nb_frames);
  return { width: Number(stream.width), height: Number(stream.height), fps: den ? num / den : NaN, frames: Number.isFinite(frames) && frames > 0 ? frames : undefined };
}

/** Frames of a video as RGB Images, in order, decoded ahead by an ffmpeg process. */
export class VideoReader {
  private readonly queue: Buffer[] = [];
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private ended = false;
  private failure?: Error;
  private wake?: () => void;
  private stderr = '';
  /** Frames decoded ahead at most before ffmpeg is paused (memory bound). */
  private readonly ahead = 4;

  private constructor(readonly path: string, readonly info: VideoInfo, private readonly proc: ChildProcess) {
    const frameBytes = info.width * info.height * 3;
    proc.stdout!.on('data', (chunk: Buffer) => {
      let c = chunk;
      while (c.length) {
        const take = Math.min(c.length, frameBytes - this.partialBytes);
        this.partial.push(c.subarray(0, take));
        this.partialBytes += take;
        c = c.subarray(take);
        if (this.partialBytes === frameBytes) {
          this.queue.push(this.partial.length === 1 ? this.partial[0] : Buffer.concat(this.partial));
          this.partial = [];
          this.partialBytes = 0;
        }
      }
      if (this.queue.length >= this.ahead) proc.stdout!.pause();
      this.wake?.();
    });
    proc.stderr!.on('data', (d) => (this.stderr = (this.stderr + d).slice(-4000)));
    proc.on('error', (e) => { this.failure = e; this.wake?.(); });
    proc.on('close', (code) => {
      this.ended = true;
      if (code && code !== 255 && !this.failure) this.failure = new UnsupportedFormatError(`${path}: ffmpeg failed to decode (${this.stderr.trim().split('\n').pop()})`);
      this.wake?.();
    });
  }

  static async open(path: string): Promise<VideoReader> {
    const info = await probeVideo(path);
    const proc = spawn('ffmpeg', ['-v', 'error', '-nostdin', '-i', path, '-map', '0:v:0', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    return new VideoReader(path, info, proc);
  }

  /** The next frame, or undefined at the end. */
  async next(): Promise<Image | undefined> {
    for (;;) {
      if (this.failure) throw this.failure;
      const f = this.queue.shift();
      if (f) {
        if (this.queue.length < this.ahead) this.proc.stdout!.resume();
        const data = new Uint8Array(f.buffer, f.byteOffset, f.byteLength);
        return { data, shape: [this.info.height, this.info.width], channels: 3, dtype: 'uint8' };
      }
      if (this.ended) return undefined;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }

  /**
   * Stops decoding (the rest of the video is not read). ffmpeg may be blocked writing into the paused pipe, where
   * SIGTERM would wait for a write that never ends: the pipe is closed and the process killed outright.
   */
  close(): void {
    if (this.ended) return;
    this.proc.stdout?.destroy();
    this.proc.kill('SIGKILL');
    this.proc.unref();
  }
}

/**
 * Writes RGB frames as a video (or numbered images for a pattern such as out/%05d.png) through ffmpeg, into a
 * temporary file renamed over `path` when finished: an interrupted run leaves no half-written video.
 */
export class VideoWriter {
  private readonly done: Promise<number>;
  private stderr = '';
  private constructor(readonly path: string, private readonly tmp: string, private readonly proc: ChildProcess) {
    proc.stderr!.on('data', (d) => (this.stderr = (this.stderr + d).slice(-4000)));
    this.done = new Promise((resolve, reject) => {
      proc.on('error', (e: NodeJS.ErrnoException) => reject(e.code === 'ENOENT' ? new UnsupportedFormatError('video output needs ffmpeg (Debian: apt-get install ffmpeg)') : e));
      proc.on('close', (code) => resolve(code ?? 1));
    });
    this.done.catch(() => undefined);
  }

  static create(path: string, width: number, height: number, fps: number): VideoWriter {
    const pattern = path.includes('%');
    const tmp = pattern ? path : join(dirname(path), `.${basename(path, extname(path))}.${process.pid}.${randomBytes(4).toString('hex')}.tmp${extname(path)}`);
    const rate = Number.isFinite(fps) && fps > 0 ? String(fps) : '25';
    const codec = pattern ? [] : ['-pix_fmt', 'yuv420p'];
    const proc = spawn('ffmpeg', ['-v', 'error', '-y', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${width}x${height}`, '-r', rate, '-i', 'pipe:0', ...codec, tmp], { stdio: ['pipe', 'ignore', 'pipe'] });
    return new VideoWriter(path, tmp, proc);
  }

  /** Appends one RGB frame (waits when ffmpeg's input is full). */
  async write(frame: Image): Promise<void> {
    const ok = this.proc.stdin!.write(Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength));
    if (!ok) await new Promise<void>((r) => this.proc.stdin!.once('drain', () => r()));
  }

  /** Finishes the file and moves it into place. */
  async close(): Promise<void> {
    this.proc.stdin!.end();
    const code = await this.done;
    if (code !== 0) {
      if (this.tmp !== this.path) await rm(this.tmp, { force: true });
      throw new FileAccessError(`cannot write ${this.path}: ffmpeg failed (${this.stderr.trim().split('\n').pop()})`);
    }
    if (this.tmp !== this.path) await rename(this.tmp, this.path);
  }

  /** Abandons the output (its temporary file is removed). */
  async abort(): Promise<void> {
    this.proc.stdin!.destroy();
    this.proc.kill('SIGTERM');
    await this.done.catch(() => undefined);
    if (this.tmp !== this.path) await rm(this.tmp, { force: true });
  }
}
