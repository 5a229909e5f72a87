#!/usr/bin/python3
"""bench/rebatch.py — a model corpus at batch B made from one at batch 1, for models
without a source to export again (the shared ones): what `BATCH=8 bench/vs_ort.sh` reads.

    /usr/bin/python3 bench/rebatch.py [--batch B] [--ort DIR] SRC [OUT] [NAME...]

SRC/NAME/model.onnx with SRC/NAME/test_data_set_0 (default NAME: every such model) become
OUT/NAME (default OUT: SRC_bB, B default 8). Per model:
- every graph input's first dimension, 1 (or a symbol), becomes B, and so does the first
  dimension of each graph output declared 1; the value_info shapes are dropped;
- a Reshape whose shape is a constant starting with 1, where the tensor it reshapes has
  first dimension 1 at batch 1 (as seen by running the model in ONNX Runtime), gets a shape
  starting with 0 ("copy the input's first dimension"): the same at batch 1, and at batch B
  it keeps B. No other constant is changed: a model with batch 1 written anywhere else
  fails the check below and is refused;
- the inputs are tiled to B samples: sample 0 is the data set's, the others (float inputs)
  have noise added (0.1 of the input's standard deviation) so that a graph that mixed
  samples could not pass;
- the expected outputs are ONNX Runtime's (bench/ort_time.js --save-outputs, level
  disabled, one thread), and they are checked: every output has B samples and sample 0
  equals the batch-1 data set's output (rtol 1e-3, atol 1e-4). A model that fails is
  refused, and the script says why.
Each model is written into a temporary folder and renamed into place; an existing OUT/NAME
is kept. The input files are only read. Exit status: 0 when every model was rebatched,
1 when some were refused, 2 on bad usage. Needs numpy, onnx and onnxruntime-node (--ort:
the folder holding node_modules/onnxruntime-node; default ORT_DIR, else
~/.cache/graphlab-ort, as for vs_ort.sh).
"""
import glob, os, shutil, signal, subprocess, sys, tempfile
import numpy as np, onnx
from onnx import numpy_helper

BENCH = os.path.dirname(os.path.abspath(__file__))


class Refused(Exception):
    """Why a model cannot be rebatched."""


def ort_outputs(ort, model, data, outdir):
    """Runs model on data's inputs in ONNX Runtime (level disabled, one thread) and writes
    its outputs to outdir/output_N.pb; returns them in order as arrays."""
    run = subprocess.run(['node', f'{BENCH}/ort_time.js', '--ort', ort, '--model', model,
                          '--data', data, '--threads', '1', '--warmup', '1', '--runs', '1',
                          '--level', 'disabled', '--save-outputs', outdir],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise Refused('ONNX Runtime: ' + (run.stderr.strip().splitlines() or ['failed'])[-1])
    files = sorted(glob.glob(f'{outdir}/output_*.pb'), key=lambda f: int(f[f.rindex('_') + 1:-3]))
    return [numpy_helper.to_array(onnx.load_tensor(f)) for f in files]


def constants(graph):
    """name -> array of every initializer and Constant node output (its 'value')."""
    known = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == 'Constant':
            for a in node.attribute:
                if a.name == 'value':
                    known[node.output[0]] = numpy_helper.to_array(a.t)
    return known


def allowzero(node):
    return any(a.name == 'allowzero' and a.i for a in node.attribute)


def reshape_data_dims(ort, model, data, tmp):
    """The shape, at batch 1, of the tensor each Reshape reshapes: the model run with those
    tensors made graph outputs. Returns {tensor name: shape}."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    position = {o.name: i for i, o in enumerate(probe.graph.output)}
    wanted = [n.input[0] for n in probe.graph.node if n.op_type == 'Reshape']
    if not wanted:
        return {}
    typed = onnx.shape_inference.infer_shapes(probe)
    elem = {v.name: v.type.tensor_type.elem_type
            for v in list(typed.graph.value_info) + list(typed.graph.input)}
    for n in wanted:
        if n not in position:
            position[n] = len(probe.graph.output)
            probe.graph.output.append(onnx.helper.make_tensor_value_info(
                n, elem.get(n) or onnx.TensorProto.FLOAT, None))
    onnx.save(probe, f'{tmp}/probe.onnx')
    os.makedirs(f'{tmp}/probe_out')
    outs = ort_outputs(ort, f'{tmp}/probe.onnx', data, f'{tmp}/probe_out')
    return {n: outs[position[n]].shape for n in wanted}


def check(model, ort, data, tmp):
    """What rebatching model changes, decided before anything is edited: the Reshapes whose
    shape gets a 0 first, as {node index: new shape}. Raises Refused."""
    inits = {t.name for t in model.graph.initializer}
    for i in model.graph.input:
        if i.name in inits:
            continue
        dims = i.type.tensor_type.shape.dim
        if not dims or (dims[0].HasField('dim_value') and dims[0].dim_value != 1):
            raise Refused(f"input '{i.name}': first dimension "
                          f"{dims[0].dim_value if dims else '(none: a scalar)'}, not 1")
    known = constants(model.graph)
    seen = reshape_data_dims(ort, model, data, tmp)
    plan = {}
    for k, node in enumerate(model.graph.node):
        if node.op_type != 'Reshape' or node.input[1] not in known or allowzero(node):
            continue
        shape = known[node.input[1]]
        if shape.ndim == 1 and shape.size and shape[0] == 1 and seen[node.input[0]][:1] == (1,):
            new = shape.copy()
            new[0] = 0
            plan[k] = new
    return plan


def apply(model, plan, batch):
    """A copy of model at batch `batch`, the Reshapes of plan given their new shapes."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    inits = {t.name for t in g.initializer}
    for v in list(g.input) + list(g.output):
        dims = v.type.tensor_type.shape.dim
        if v.name not in inits and dims and not (dims[0].HasField('dim_value') and
                                                 dims[0].dim_value != 1):
            dims[0].Clear()
            dims[0].dim_value = batch
    del g.value_info[:]
    for k, shape in plan.items():
        node = g.node[k]
        name = f'{node.input[1]}_batch{batch}_{k}'
        g.initializer.append(numpy_helper.from_array(shape, name))
        node.input[1] = name
    return out


def tile(tensor, batch, sample_seed):
    """batch samples of tensor (first dimension 1): sample 0 as given, the others with
    noise if the tensor is float."""
    t = np.repeat(tensor, batch, axis=0)
    if np.issubdtype(t.dtype, np.floating):
        scale = 0.1 * (float(tensor.std()) or 1.0)
        for s in range(1, batch):
            noise = np.random.default_rng(sample_seed + s).standard_normal(tensor.shape[1:])
            t[s] += (scale * noise).astype(t.dtype)
    return t


def rebatch(src, out, ort, batch, tmp):
    """Writes src (a model folder) at batch `batch` into out. Raises Refused."""
    model = onnx.load(f'{src}/model.onnx')
    data = f'{src}/test_data_set_0'
    new = apply(model, check(model, ort, data, tmp), batch)
    os.makedirs(f'{out}/test_data_set_0')
    onnx.save(new, f'{out}/model.onnx')
    inputs = sorted(glob.glob(f'{data}/input_*.pb'))
    for i, f in enumerate(inputs):
        t = onnx.load_tensor(f)
        a = numpy_helper.to_array(t)
        if a.ndim == 0 or a.shape[0] != 1:
            raise Refused(f'{f}: first dimension {a.shape[:1]}, not 1')
        with open(f'{out}/test_data_set_0/input_{i}.pb', 'wb') as w:
            w.write(numpy_helper.from_array(tile(a, batch, 1000 * i), t.name).SerializeToString())
    got = ort_outputs(ort, f'{out}/model.onnx', f'{out}/test_data_set_0', f'{out}/test_data_set_0')
    for i, y in enumerate(got):
        want = numpy_helper.to_array(onnx.load_tensor(f'{data}/output_{i}.pb'))
        if y.shape[:1] != (batch,) or y.shape[1:] != want.shape[1:]:
            raise Refused(f'output {i}: shape {list(y.shape)} at batch {batch}, '
                          f'{list(want.shape)} at batch 1')
        if not np.allclose(y[:1], want, rtol=1e-3, atol=1e-4):
            raise Refused(f'output {i}: sample 0 differs from the batch-1 output by up to '
                          f'{float(np.abs(y[:1] - want).max()):.3g}')


def parse(argv):
    """(batch, ort, src, out, names) from the command line, or None."""
    batch, ort = 8, os.environ.get('ORT_DIR') or os.path.expanduser('~/.cache/graphlab-ort')
    while argv[:1] in (['--batch'], ['--ort']) and len(argv) > 1:
        if argv[0] == '--batch':
            if not argv[1].isdigit() or int(argv[1]) < 2:
                return None
            batch = int(argv[1])
        else:
            ort = argv[1]
        argv = argv[2:]
    if not argv or argv[0].startswith('-'):
        return None
    src = argv[0].rstrip('/')
    out = argv[1] if len(argv) > 1 else f'{src}_b{batch}'
    return batch, ort, src, out, argv[2:]


def main():
    args = parse(sys.argv[1:])
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    batch, ort, src, out, names = args
    if os.path.realpath(out) == os.path.realpath(src):
        print(f'rebatch.py: OUT {out} is SRC: the input models are never written', file=sys.stderr)
        return 2
    names = names or sorted(os.path.basename(os.path.dirname(d))
                            for d in glob.glob(f'{src}/*/test_data_set_0'))
    refused = []
    os.makedirs(out, exist_ok=True)
    # killed, the model being written is removed (the finally below) like on Ctrl-C
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    for name in names:
        if os.path.exists(f'{out}/{name}'):
            print(f'{name}: kept (already in {out})')
            continue
        if not os.path.isfile(f'{src}/{name}/model.onnx'):
            refused.append(name)
            print(f'{name}: not rebatched: no {src}/{name}/model.onnx')
            continue
        tmp = tempfile.mkdtemp(prefix=f'.{name}.', dir=out)
        try:
            rebatch(f'{src}/{name}', f'{tmp}/model', ort, batch, tmp)
            os.rename(f'{tmp}/model', f'{out}/{name}')
            print(f'{name}: batch {batch}', flush=True)
        except Refused as e:
            refused.append(name)
            print(f'{name}: not rebatched: {e}', flush=True)
        except (OSError, ValueError, KeyError, onnx.onnx_cpp2py_export.checker.ValidationError,
                onnx.shape_inference.InferenceError) as e:  # an unreadable model or data set
            refused.append(name)
            print(f'{name}: not rebatched: {type(e).__name__}: {e}', flush=True)
        finally:
            shutil.rmtree(tmp)
    if refused:
        print(f'not rebatched ({len(refused)}): {" ".join(refused)}')
    return 1 if refused else 0


if __name__ == '__main__':
    sys.exit(main())
