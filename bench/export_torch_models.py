#!/usr/bin/python3
"""bench/export_torch_models.py — models nobody here wrote, for bench/sweep_models.sh.

    /usr/bin/python3 bench/export_torch_models.py [--batch B] OUTDIR [NAME...]

Exports torchvision architectures, three transformer blocks (GPT-2 style with a causal
mask and tanh Gelu, BERT style with a padding mask, a ViT block through
nn.MultiheadAttention), channels-last variants of two of the architectures (an NHWC input
permuted to NCHW first, as a TensorFlow export starts with a Transpose), a DBNet-style text
detector head (ConvTranspose upsampling, skip Adds, a ConvTranspose + Sigmoid map), a small
U-Net (nearest and bilinear Resize, Concat skips), a ConvTranspose decoder with skip Adds,
DenseNet-121 at growth rate 16, resnet18 and a U-Net with a symbolic batch (the U-Net's
Resize sizes computed at run time) and recurrent taggers (LSTM, GRU, RNN; issue 22) with
random weights, in the ONNX test layout: OUTDIR/NAME/model.onnx
and test_data_set_0/{input_*,output_0}.pb, the output computed by torch. With --batch B
(B > 1) the same models, same weights, at batch B go to OUTDIR_bB (OUTDIR without the
suffix: `--batch 8 /work/tv` writes /work/tv_b8, the folder `BATCH=8 vs_ort.sh` reads);
the first sample of each input is the batch-1 input. BatchNorm running
statistics are drawn away from (0, 1) so that folding them shows in the numbers. Needs
Debian's python3-torchvision (apt-get install python3-torchvision python3-onnx); not part
of the build or the test suite.
"""
import math, os, shutil, sys
import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
import torchvision.models as tvm
from onnx import numpy_helper

# name: (constructor, image size, opset). Opset 17 where the export then has ONNX's
# LayerNormalization; 11 for one model exported the old way.
specs = {
    'resnet18': (tvm.resnet18, 224, 13),
    'resnet50': (tvm.resnet50, 224, 13),
    'resnext50_32x4d': (tvm.resnext50_32x4d, 224, 13),
    'efficientnet_b0': (tvm.efficientnet_b0, 224, 13),
    'efficientnet_v2_s': (tvm.efficientnet_v2_s, 224, 13),
    'densenet121': (tvm.densenet121, 224, 13),
    'googlenet': (lambda: tvm.googlenet(aux_logits=False, init_weights=True), 224, 13),
    # init_weights=True draws every conv from N(0, 0.1): the logits reach 1e12 and float32
    # rounding alone is over any absolute tolerance; PyTorch's default init keeps them ~0.5.
    'inception_v3': (lambda: tvm.inception_v3(aux_logits=False, init_weights=False), 299, 13),
    'mnasnet0_5': (tvm.mnasnet0_5, 224, 13),
    'regnet_y_400mf': (tvm.regnet_y_400mf, 224, 13),
    'convnext_tiny': (tvm.convnext_tiny, 224, 17),
    'swin_t': (tvm.swin_t, 224, 17),
    'vgg11': (tvm.vgg11, 224, 13),
    'alexnet': (tvm.alexnet, 224, 13),
    'mobilenet_v3_small': (tvm.mobilenet_v3_small, 224, 13),
    'mobilenet_v3_large': (tvm.mobilenet_v3_large, 224, 11),
    'shufflenet_v2_x1_0': (tvm.shufflenet_v2_x1_0, 224, 13),
    'squeezenet1_0': (tvm.squeezenet1_0, 224, 13),
}


class Nhwc(nn.Module):
    """A channels-last input permuted to NCHW before the network, as TensorFlow's exports
    look: the graph starts with a Transpose."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x.permute(0, 3, 1, 2))


def conv_bn(cin, cout, stride=1, k=3):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class DBNetHead(nn.Module):
    """An OCR text detector's shape (DBNet): a conv backbone at strides 2, 4, 8, 16; a decoder
    of ConvTranspose (stride 2, with bias) + Add of the skip + BatchNorm + Relu; the
    probability head conv 3x3, ConvTranspose (k2 without bias) + BatchNorm + Relu, and a
    final ConvTranspose (k4, pad 1) + Sigmoid at the input's resolution."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2 = conv_bn(3, 16, 2), conv_bn(16, 32, 2)
        self.c3, self.c4 = conv_bn(32, 64, 2), conv_bn(64, 96, 2)
        self.up4 = nn.ConvTranspose2d(96, 64, 2, 2)
        self.up3 = nn.ConvTranspose2d(64, 32, 2, 2)
        self.bn4, self.bn3 = nn.BatchNorm2d(64), nn.BatchNorm2d(32)
        self.head = nn.Sequential(
            conv_bn(32, 16), nn.ConvTranspose2d(16, 16, 2, 2, bias=False),
            nn.BatchNorm2d(16), nn.ReLU(inplace=True), nn.ConvTranspose2d(16, 1, 4, 2, 1),
            nn.Sigmoid())

    def forward(self, x):
        c2 = self.c2(self.c1(x))
        c3 = self.c3(c2)
        p3 = F.relu(self.bn4(self.up4(self.c4(c3)) + c3))
        p2 = F.relu(self.bn3(self.up3(p3) + c2))
        return self.head(p2)


class UNet(nn.Module):
    """Three levels down by MaxPool, up by nn.Upsample (nearest, then bilinear) with a Concat
    of the skip; a side head from the bottom, upsampled bilinear x4, added to the map."""

    def __init__(self):
        super().__init__()
        self.e1, self.e2, self.e3 = conv_bn(3, 16), conv_bn(16, 32), conv_bn(32, 64)
        self.d2, self.d1 = conv_bn(96, 32), conv_bn(48, 16)
        self.up_nearest = nn.Upsample(scale_factor=2, mode='nearest')
        self.up_bilinear = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
        self.side = nn.Sequential(nn.Conv2d(64, 2, 1),
                                  nn.Upsample(scale_factor=4, mode='bilinear', align_corners=False))
        self.out = nn.Conv2d(16, 2, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(F.max_pool2d(e1, 2))
        e3 = self.e3(F.max_pool2d(e2, 2))
        d2 = self.d2(torch.cat([self.up_nearest(e3), e2], 1))
        d1 = self.d1(torch.cat([self.up_bilinear(d2), e1], 1))
        return self.out(d1) + self.side(e3)


class UNetToSkipSizes(UNet):
    """UNet's weights, each upsampling to the size of the map it joins (as U-Nets that take
    any image size do): exported with a symbolic batch, every Resize's output sizes are
    computed at run time from Shape, where UNet's export has constant scales."""

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(F.max_pool2d(e1, 2))
        e3 = self.e3(F.max_pool2d(e2, 2))
        d2 = self.d2(torch.cat([F.interpolate(e3, size=e2.shape[2:], mode='nearest'), e2], 1))
        d1 = self.d1(torch.cat([F.interpolate(d2, size=e1.shape[2:], mode='bilinear',
                                              align_corners=False), e1], 1))
        side = F.interpolate(self.side[0](e3), size=d1.shape[2:], mode='bilinear',
                             align_corners=False)
        return self.out(d1) + side


class ConvTransposeDecoder(nn.Module):
    """A segmentation or OCR detector's decoder: two stride-2 convs down from a 64-channel
    32x32 feature map, then ConvTranspose (stride 2) + BatchNorm + Relu layers back up, each
    added to the encoder's map of its size, and two more ConvTransposes (k4 pad 1; k3 pad 1
    output_padding 1) to 128x128 before a 1x1 head."""

    def __init__(self):
        super().__init__()
        self.down1, self.down2 = conv_bn(64, 96, 2), conv_bn(96, 128, 2)
        self.up2 = nn.Sequential(nn.ConvTranspose2d(128, 96, 2, 2, bias=False),
                                 nn.BatchNorm2d(96), nn.ReLU(inplace=True))
        self.up1 = nn.Sequential(nn.ConvTranspose2d(96, 64, 2, 2, bias=False),
                                 nn.BatchNorm2d(64), nn.ReLU(inplace=True))
        self.up0 = nn.Sequential(nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.BatchNorm2d(32),
                                 nn.ReLU(inplace=True),
                                 nn.ConvTranspose2d(32, 16, 3, 2, 1, output_padding=1),
                                 nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.head = nn.Conv2d(16, 2, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(d1)
        u1 = self.up2(d2) + d1
        u0 = self.up1(u1) + x
        return self.head(self.up0(u0))


def densenet121_g16():
    """DenseNet-121's block layout (6, 12, 24, 16) at half its growth rate (16, not 32) and
    32 stem features, not 64: as many Concats as densenet121, on narrower tensors."""
    return tvm.DenseNet(growth_rate=16, block_config=(6, 12, 24, 16), num_init_features=32)


# name: (constructor, input shape, opset): the kinds of convolutional graph the
# torchvision table lacks. The NHWC variants take 128x128 so that runs stay short.
convs = {
    'mobilenet_v2_nhwc': (lambda: Nhwc(tvm.mobilenet_v2()), (1, 128, 128, 3), 13),
    'resnet18_nhwc': (lambda: Nhwc(tvm.resnet18()), (1, 128, 128, 3), 13),
    'dbnet_head': (DBNetHead, (1, 3, 128, 128), 13),
    'unet_small': (UNet, (1, 3, 128, 128), 13),
    'convtranspose_decoder': (ConvTransposeDecoder, (1, 64, 32, 32), 13),
    'densenet121_g16': (densenet121_g16, 224, 13),
}

# name: constructor of a model exported with a symbolic batch (dynamic_axes {0: 'N'} on its
# input and output), its input shape that of the table above without the suffix: shapes
# that hang on the batch are computed at run time (the U-Net's Resize output sizes).
dynbatch = {'resnet18_dynbatch': tvm.resnet18, 'unet_dynbatch': UNetToSkipSizes}


def split_heads(t, heads):
    b, n, c = t.shape
    return t.view(b, n, heads, c // heads).transpose(1, 2)


def join_heads(t):
    b, h, n, d = t.shape
    return t.transpose(1, 2).contiguous().view(b, n, h * d)


class GPT2Block(nn.Module):
    """Pre-norm block: causal mask by masked_fill(-inf), Gelu in its tanh form."""

    def __init__(self, d=128, heads=4, tokens=16):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer('mask', torch.tril(torch.ones(tokens, tokens)).view(1, 1, tokens, tokens))

    def forward(self, x):
        n, c = x.shape[1], x.shape[2]
        q, k, v = (split_heads(t, self.heads) for t in self.qkv(self.ln1(x)).split(c, dim=2))
        a = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        a = F.softmax(a.masked_fill(self.mask[:, :, :n, :n] == 0, float('-inf')), dim=-1)
        x = x + self.proj(join_heads(a @ v))
        h = self.fc(self.ln2(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + self.fc2(h)


class BertLayer(nn.Module):
    """Post-norm layer: a padding mask added as (1 - mask) * -10000, erf Gelu."""

    def __init__(self, d=128, heads=4):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-12), nn.LayerNorm(d, eps=1e-12)
        self.inner, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, mask):
        dh = x.shape[2] // self.heads
        q, k, v = (split_heads(f(x), self.heads) for f in (self.q, self.k, self.v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(dh)
        scores = scores + (1.0 - mask[:, None, None, :]) * -10000.0
        x = self.ln1(self.o(join_heads(torch.matmul(F.softmax(scores, dim=-1), v))) + x)
        return self.ln2(self.out(F.gelu(self.inner(x))) + x)


class ViTBlock(nn.Module):
    """Pre-norm block through nn.MultiheadAttention."""

    def __init__(self, d=96, heads=3):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-6), nn.LayerNorm(d, eps=1e-6)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        y = self.ln1(x)
        y, _ = self.attn(y, y, y, need_weights=False)
        x = x + y
        return x + self.mlp(self.ln2(x))


class Tagger(nn.Module):
    """A sequence tagger: recurrent layers (each an nn.LSTM, nn.GRU or nn.RNN, sequence
    first) and a Linear to 16 tags on every step."""

    def __init__(self, *layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.tags = nn.Linear(layers[-1].hidden_size * (2 if layers[-1].bidirectional else 1), 16)

    def forward(self, x):
        for layer in self.layers:
            x, _ = layer(x)
        return self.tags(x)


# name: (constructor, opset): recurrent taggers on a [sequence 32, batch, 64] input. torch
# exports nn.GRU with linear_before_reset=1, so gru_lbr (and lstm_tagger's GRU) have it.
recurrent = {
    'lstm_tagger': (lambda: Tagger(nn.LSTM(64, 128, bidirectional=True), nn.GRU(256, 128)), 14),
    'gru_lbr': (lambda: Tagger(nn.GRU(64, 128)), 14),
    'rnn_tanh': (lambda: Tagger(nn.RNN(64, 64, nonlinearity='tanh')), 14),
}
RECURRENT_STEPS = 32


def save(out, names, inputs, y):
    os.makedirs(f'{out}/test_data_set_0', exist_ok=True)
    for i, (n, t) in enumerate(zip(names, inputs)):
        with open(f'{out}/test_data_set_0/input_{i}.pb', 'wb') as f:
            f.write(numpy_helper.from_array(t.numpy(), n).SerializeToString())
    with open(f'{out}/test_data_set_0/output_0.pb', 'wb') as f:
        f.write(numpy_helper.from_array(y.numpy(), 'output').SerializeToString())


def export(outdir, name, make, opset, names, dynamic_batch=False):
    """make() -> (model, inputs), called with the seed reset: a model's weights do not
    depend on which others were asked for (nor on the batch). dynamic_batch: the first
    dimension of every input and of the output is the symbol N."""
    if os.path.exists(f'{outdir}/{name}/model.onnx'):
        return
    # written whole into a temporary folder, then renamed: an interrupted export leaves
    # no half model that a later call would keep
    out = f'{outdir}/.{name}.tmp'
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    torch.manual_seed(0)
    m, inputs = make()
    m.eval()
    axes = {n: {0: 'N'} for n in names + ['output']} if dynamic_batch else None
    with torch.no_grad():
        y = m(*inputs)
        torch.onnx.export(m, tuple(inputs), f'{out}/model.onnx', opset_version=opset,
                          input_names=names, output_names=['output'], dynamic_axes=axes)
    save(out, names, inputs, y)
    shutil.rmtree(f'{outdir}/{name}', ignore_errors=True)
    os.rename(out, f'{outdir}/{name}')
    print(name, 'ok', flush=True)


def standard_normal(shape):
    """The data set's input: N(0, 1) from seed 0. Its first sample does not depend on the
    batch: at batch 8, sample 0 is the batch-1 input."""
    return torch.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


def vision(make, shape, batch):
    """make()'s BatchNorm statistics drawn; the input of shape (an int: Bx3xNxN), its
    first dimension the batch."""
    m = make()
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.2, 0.2)
    if isinstance(shape, int):
        shape = (1, 3, shape, shape)
    return m, [standard_normal((batch,) + tuple(shape[1:]))]


def blocks(batch):
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((batch, 16, 128)).astype(np.float32))
    mask = torch.ones(batch, 16)
    mask[:, 12:] = 0
    xv = torch.from_numpy(rng.standard_normal((batch, 50, 96)).astype(np.float32))
    return {
        'gpt2_block_op13': (GPT2Block, [x], 13, ['x']),
        'gpt2_block_op17': (GPT2Block, [x], 17, ['x']),
        'bert_layer_op13': (BertLayer, [x, mask], 13, ['x', 'mask']),
        'bert_layer_op17': (BertLayer, [x, mask], 17, ['x', 'mask']),
        'vit_block_op13': (ViTBlock, [xv], 13, ['x']),
    }


def known(name):
    return any(name in t for t in (specs, convs, dynbatch, recurrent, blocks(1)))


def export_named(outdir, name, batch):
    """Exports one model of the tables (a known name)."""
    tf = blocks(batch)
    if name in specs or name in convs or name in dynbatch:
        if name in dynbatch:
            base = name.replace('_dynbatch', '_small' if name.startswith('unet') else '')
            _, shape, opset = specs.get(base) or convs[base]
            make = dynbatch[name]
        else:
            make, shape, opset = specs.get(name) or convs[name]
        export(outdir, name, lambda: vision(make, shape, batch), opset, ['input'],
               dynamic_batch=name in dynbatch)
    elif name in recurrent:
        make, opset = recurrent[name]
        # drawn batch first, so that sample 0 stays the batch-1 input
        x = standard_normal((batch, RECURRENT_STEPS, 64)).transpose(0, 1).contiguous()
        export(outdir, name, lambda: (make(), [x]), opset, ['input'])
    else:
        cls, inputs, opset, in_names = tf[name]
        export(outdir, name, lambda: (cls(), inputs), opset, in_names)


def main():
    args = sys.argv[1:]
    batch = 1
    if args[:1] == ['--batch']:
        if len(args) < 2 or not args[1].isdigit() or int(args[1]) < 1:
            print('--batch takes a positive number', file=sys.stderr)
            return 2
        batch, args = int(args[1]), args[2:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = args[0] if batch == 1 else f'{args[0].rstrip("/")}_b{batch}'
    names = args[1:] or (list(specs) + list(convs) + list(dynbatch) + list(recurrent) +
                         list(blocks(batch)))
    unknown = [n for n in names if not known(n)]
    if unknown:  # said before anything is exported
        print(f'unknown model {" ".join(unknown)}', file=sys.stderr)
        return 2
    for name in names:
        export_named(outdir, name, batch)
    return 0


if __name__ == '__main__':
    sys.exit(main())
