# Device measurement (docs/throughput.md, "Otsu's first process"): python3 bench/otsu_exit.py FOLDER OUTDIR, from the repository root.
# When does an Otsu batch's process end, against when it printed its summary? Fresh and warm NVIDIA shader caches.
import json, os, subprocess, sys, tempfile, time
folder = sys.argv[1]
out = sys.argv[2]
def run(cache, op):
    env = dict(os.environ)
    env['__GL_SHADER_DISK_CACHE_PATH'] = cache
    t0 = time.time()
    args = ['node', 'bin/imgpu.js'] + op + ['--json', '--quiet', '--overwrite']
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    last = None; t_json = None
    for line in p.stdout:
        if line.strip(): last = line; t_json = time.time() - t0
    p.wait(); t_end = time.time() - t0
    d = json.loads(last) if last else {}
    return {'op': op[0] + ('/' + op[op.index('--method') + 1] if '--method' in op else ''), 'summary_s': round(t_json or -1, 3), 'exit_s': round(t_end, 3), 'batch_s': d.get('seconds'), 'startup_ms': d.get('startup_ms'), 'rc': p.returncode}
res = []
for r in range(2):
    cold = tempfile.mkdtemp()
    for op in (['threshold', folder, out, '--method', 'otsu'], ['threshold', folder, out, '--method', 'otsu'], ['equalize', folder, out]):
        x = run(cold, op); x['cache'] = 'fresh dir, run %d' % r; res.append(x); print(json.dumps(x), flush=True)
