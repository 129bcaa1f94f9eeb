# SPDX-License-Identifier: MIT
"""The models and data of the training example, with PyTorch alone (no torchvision, no downloads).

Models (MODELS):
- "mlp": the small MLP learning a fixed random linear teacher (seconds on a CPU; the default of ps_train.py).
- "resnet20", "resnet32", "resnet56", "resnet110": the CIFAR ResNets of He, Zhang, Ren and Sun, "Deep
  Residual Learning for Image Recognition", CVPR 2016, section 4.2: a 3x3 convolution with 16 filters, then
  three stages of n basic blocks (two 3x3 convolutions each, batch norm, ReLU) with 16, 32 and 64 filters on
  32x32, 16x16 and 8x8 maps (the first convolution of stages 2 and 3 has stride 2), global average pooling and
  a fully connected layer: 6n + 2 weighted layers, n = 3, 5, 9, 18. Shortcuts are identities; where the map
  halves and the width doubles, the identity is subsampled and zero-padded (the paper's option A, no extra
  parameters). The paper gives 0.27M, 0.46M, 0.85M and 1.7M parameters (its Table 6).

Data (make_data):
- "synthetic" (the default): CIFAR-shaped 3x32x32 images, learnable: each class has a fixed random smooth
  prototype, an image is its class's prototype plus noise, so the cross-entropy falls from ln(classes) as the
  network learns. Seeded, identical on every worker, made in memory.
- a directory or file of CIFAR-10 / CIFAR-100 in its standard binary format (the "binary version" from
  https://www.cs.toronto.edu/~kriz/cifar.html): records of 1 label byte (CIFAR-10) or 2 (coarse, fine:
  CIFAR-100, the fine label is used) and 3,072 pixel bytes (1,024 red, 1,024 green, 1,024 blue, row-major).
"""

import os

import torch
from torch import nn
import torch.nn.functional as F

MLP_INPUT_DIM = 32
MLP_HIDDEN_DIM = 64
MLP_DATASET_SIZE = 8192
MLP_LABEL_NOISE = 0.05

RESNET_BLOCKS = {"resnet20": 3, "resnet32": 5, "resnet56": 9, "resnet110": 18}
MODELS = ("mlp",) + tuple(RESNET_BLOCKS)

CIFAR_PIXELS = 3 * 32 * 32
CIFAR_LABEL_BYTES = {10: 1, 100: 2}
CIFAR_MAX_BYTES = 1 << 30  # the 60,000-image sets are 184 MB; more is not a CIFAR copy
SYNTHETIC_IMAGES = 4096
SYNTHETIC_NOISE = 1.0


class BasicBlock(nn.Module):
    def __init__(self, in_planes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.pad = planes - in_planes  # option A: zero channels added to the subsampled identity
        self.stride = stride

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        shortcut = x
        if self.stride != 1 or self.pad:
            shortcut = x[:, :, ::self.stride, ::self.stride]
            shortcut = F.pad(shortcut, (0, 0, 0, 0, self.pad // 2, self.pad - self.pad // 2))
        return F.relu(out + shortcut)


class CifarResNet(nn.Module):
    def __init__(self, blocks_per_stage, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        layers, in_planes = [], 16
        for planes, stride in ((16, 1), (32, 2), (64, 2)):
            for block in range(blocks_per_stage):
                layers.append(BasicBlock(in_planes, planes, stride if block == 0 else 1))
                in_planes = planes
        self.stages = nn.Sequential(*layers)
        self.fc = nn.Linear(64, classes)
        for m in self.modules():  # He initialisation, as the paper's section 3.4
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.stages(out)
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.fc(out)


def make_model(name, seed, classes=10):
    """The model `name` (one of MODELS) with weights drawn from `seed`."""
    torch.manual_seed(seed)
    if name == "mlp":
        return nn.Sequential(nn.Linear(MLP_INPUT_DIM, MLP_HIDDEN_DIM), nn.Tanh(), nn.Linear(MLP_HIDDEN_DIM, 1))
    if name in RESNET_BLOCKS:
        return CifarResNet(RESNET_BLOCKS[name], classes)
    raise ValueError(f"model = {name!r}: give one of {', '.join(MODELS)}")


def loss_function(name):
    return nn.MSELoss() if name == "mlp" else nn.CrossEntropyLoss()


def parameter_bytes(model):
    """Bytes of the parameters a worker pushes as gradients and pulls as weights per update (fp32)."""
    return sum(p.numel() * p.element_size() for p in model.parameters())


class TeacherData:
    """The MLP's data: input k has standard deviation 1/k, the target a fixed random linear teacher plus
    noise, so SGD learns the directions one after another and the loss falls roughly like 1/j."""

    def __init__(self, seed):
        g = torch.Generator().manual_seed(seed)
        scale = torch.arange(1, MLP_INPUT_DIM + 1, dtype=torch.float32).reciprocal()
        self.x = torch.randn(MLP_DATASET_SIZE, MLP_INPUT_DIM, generator=g) * scale
        clean = self.x @ torch.randn(MLP_INPUT_DIM, 1, generator=g)
        self.y = clean / clean.std() + MLP_LABEL_NOISE * torch.randn(MLP_DATASET_SIZE, 1, generator=g)
        self.description = "synthetic linear teacher"

    def batch(self, size, generator):
        index = torch.randint(0, MLP_DATASET_SIZE, (size,), generator=generator)
        return self.x[index], self.y[index]


class ImageData:
    """Images (N x 3 x 32 x 32, normalised floats) and class labels; batches drawn with replacement."""

    def __init__(self, x, y, description):
        self.x, self.y, self.description = x, y, description

    def batch(self, size, generator):
        index = torch.randint(0, self.x.shape[0], (size,), generator=generator)
        return self.x[index], self.y[index]


def synthetic_cifar(seed, classes):
    g = torch.Generator().manual_seed(seed)
    # Smooth prototypes: 8x8 random patterns upsampled to 32x32, one per class.
    prototypes = F.interpolate(torch.randn(classes, 3, 8, 8, generator=g), size=(32, 32), mode="bilinear",
                               align_corners=False)
    y = torch.randint(0, classes, (SYNTHETIC_IMAGES,), generator=g)
    x = prototypes[y] + SYNTHETIC_NOISE * torch.randn(SYNTHETIC_IMAGES, 3, 32, 32, generator=g)
    return ImageData(x, y, f"synthetic CIFAR-shaped data, {classes} classes")


def _cifar_files(path):
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.endswith(".bin") and not n.startswith("test"))
        if not names:
            raise ValueError(f"--dataset = {path!r}: no training .bin files in it (CIFAR-10's data_batch_*.bin "
                             "or CIFAR-100's train.bin)")
        return [os.path.join(path, n) for n in names]
    if os.path.isfile(path):
        return [path]
    raise ValueError(f"--dataset = {path!r}: no such file or directory (give synthetic or a CIFAR binary copy)")


def read_cifar_binary(path, classes):
    """The images and labels of a CIFAR-10 (classes 10) or CIFAR-100 (classes 100, fine labels) binary copy
    at `path`, a file or a directory of *.bin files. Raises ValueError naming the file and what is wrong."""
    if classes not in CIFAR_LABEL_BYTES:
        raise ValueError(f"--classes = {classes}: a CIFAR binary copy has 10 or 100 classes")
    label_bytes = CIFAR_LABEL_BYTES[classes]
    record = label_bytes + CIFAR_PIXELS
    images, labels, total = [], [], 0
    for name in _cifar_files(path):
        size = os.path.getsize(name)
        total += size
        if size == 0 or size % record != 0 or total > CIFAR_MAX_BYTES:
            why = ("more than 1 GiB in all" if total > CIFAR_MAX_BYTES else
                   f"{size} bytes is not a whole number of {record}-byte records")
            raise ValueError(f"--dataset: {name}: {why} (CIFAR-{classes} binary records are {label_bytes} label "
                             f"byte(s) and {CIFAR_PIXELS} pixel bytes; is --classes right?)")
        with open(name, "rb") as f:
            raw = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8).view(-1, record)
        label = raw[:, label_bytes - 1].long()
        if int(label.max()) >= classes:
            raise ValueError(f"--dataset: {name}: label {int(label.max())} is not below {classes} "
                             f"(is --classes right?)")
        labels.append(label)
        images.append(raw[:, label_bytes:].reshape(-1, 3, 32, 32))
    x = torch.cat(images).float().div_(255.0)
    mean = x.mean(dim=(0, 2, 3), keepdim=True)
    std = x.std(dim=(0, 2, 3), keepdim=True).clamp_min(1e-6)
    return ImageData((x - mean) / std, torch.cat(labels), f"CIFAR-{classes} from {path} ({x.shape[0]} images)")


def make_data(model, dataset, seed, classes):
    """The data `model` trains on: the MLP's teacher, synthetic CIFAR-shaped images, or a CIFAR binary copy."""
    if model == "mlp":
        if dataset != "synthetic":
            raise ValueError(f"--dataset = {dataset!r}: the mlp model trains on its synthetic teacher only")
        return TeacherData(seed)
    if dataset == "synthetic":
        return synthetic_cifar(seed, classes)
    return read_cifar_binary(dataset, classes)


def resolve_device(requested):
    """torch.device for --device auto|cpu|cuda (auto: CUDA when present). Raises ValueError for cuda without it."""
    if requested == "cpu":
        return torch.device("cpu")
    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        raise ValueError("--device = cuda: this PyTorch sees no CUDA device (torch.cuda.is_available() is False; "
                         f"torch {torch.__version__}, built with CUDA {torch.version.cuda}); use --device cpu or auto")
    if requested not in ("auto", "cuda"):
        raise ValueError(f"--device = {requested!r}: give auto, cpu or cuda")
    return torch.device("cuda") if available else torch.device("cpu")
