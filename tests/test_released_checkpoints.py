"""Loading the checkpoints released with TIM / alpha-TIM (`fewshot_nb.training.backbones.load_released_checkpoint`).

The ResNet-18 case is checked against the authors' own features in tests/test_reference_fixture.py. There is no
such fixture for the wide ResNet ('wideres'), so `TheirWideResNet` below transcribes the structure and parameter
names of TIM's `src/models/WideResNet.py` (`Wide_ResNet(28, 10, 0, num_classes)`, `forward(x, feature=True)`)
independently of the library's `WRN28_10`; a checkpoint written from it the way the authors' are (a dict with
`epoch`, `arch`, `state_dict` under `module.` keys) must load and give the same features and logits. The other tests
check that whatever does not fit is refused with the keys (or the reason) named. These tests need no fixture.
"""
import pickle
from pathlib import Path
import pytest
import torch, torch.nn as nn, torch.nn.functional as F
from fewshot_nb.training.backbones import (BACKBONES, CheckpointMismatchError, ResNet18, WRN28_10, count_params,
                                           from_released_state_dict, imagenet_normalize, list_backbones,
                                           load_released_checkpoint, make_backbone, released_key_map)


class TheirWideBlock(nn.Module):
    "TIM's `wide_basic`: BN-ReLU-conv (bias) -> dropout -> BN-ReLU-conv (bias, the stride), plus a conv shortcut of the raw input."
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.bn1, self.conv1 = nn.BatchNorm2d(c_in), nn.Conv2d(c_in, c_out, 3, padding=1)
        self.dropout = nn.Dropout(0.0)
        self.bn2, self.conv2 = nn.BatchNorm2d(c_out), nn.Conv2d(c_out, c_out, 3, stride=stride, padding=1)
        self.shortcut = nn.Sequential() if stride == 1 and c_in == c_out else nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride=stride))

    def forward(self, x):
        h = self.dropout(self.conv1(F.relu(self.bn1(x))))
        return self.conv2(F.relu(self.bn2(h))) + self.shortcut(x)


class TheirWideResNet(nn.Module):
    "TIM's `wideres`: conv1, layer1-3 of 4 blocks (160, 320, 640 channels), bn1, linear; `forward(x, True)` -> (features, logits)."
    def __init__(self, num_classes=64):
        super().__init__()
        self.conv1, c = nn.Conv2d(3, 16, 3, padding=1), 16
        for g, (width, stride) in enumerate(((160, 1), (320, 2), (640, 2)), 1):
            blocks = []
            for b in range(4):
                blocks.append(TheirWideBlock(c, width, stride if b == 0 else 1)); c = width
            setattr(self, f"layer{g}", nn.Sequential(*blocks))
        self.bn1, self.linear = nn.BatchNorm2d(640, momentum=0.9), nn.Linear(640, num_classes)

    def forward(self, x, feature=False):
        h = F.relu(self.bn1(self.layer3(self.layer2(self.layer1(self.conv1(x))))))
        f = F.adaptive_avg_pool2d(h, 1).flatten(1)
        return (f, self.linear(f)) if feature else self.linear(f)


class NotATensor:   # an arbitrary Python object inside a checkpoint (module level, so that trust=True can unpickle it)
    pass


def _randomize_bn(net, seed=0):
    "Random BatchNorm scales, shifts and running statistics, so that eval mode and every BN entry matter."
    g = torch.Generator().manual_seed(seed)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.weight.data, m.running_var.data = 0.5 + torch.rand(n, generator=g), 0.5 + torch.rand(n, generator=g)
            m.bias.data, m.running_mean.data = 0.1 * torch.randn(n, generator=g), 0.1 * torch.randn(n, generator=g)
    return net


@pytest.fixture(scope="module")
def their_wrn():
    "A TheirWideResNet with random weights held in float16 precision (as stored), in eval mode."
    torch.manual_seed(0)
    net = _randomize_bn(TheirWideResNet()).eval()
    net.load_state_dict({k: v.half().float() if v.is_floating_point() else v for k, v in net.state_dict().items()})
    return net


def _save_authors_way(net, path, arch, prefix="module.", **extra):
    torch.save(dict(epoch=90, arch=arch, best_prec1=0.0, state_dict={prefix + k: v.half() if v.is_floating_point() else v
                                                                      for k, v in net.state_dict().items()}, **extra), path)
    return path


def _resnet18_state(seed=0):
    "A state_dict of ResNet-18 in the authors' naming (no 'module.'), built from the key map and our module."
    torch.manual_seed(seed)
    net, fc = ResNet18(), nn.Linear(512, 64)
    ours = {**{f"backbone.{k}": v for k, v in net.state_dict().items()}, "fc.weight": fc.weight.data, "fc.bias": fc.bias.data}
    return {theirs: ours[o] for theirs, (o, _) in released_key_map("resnet18").items()}


def test_wideres_round_trip(their_wrn, tmp_path):
    "A checkpoint of TIM's wide ResNet, saved as the authors save theirs, gives the transcription's features and logits."
    ck = _save_authors_way(their_wrn, tmp_path/"model_best.pth.tar", "wideres")
    net, fc = load_released_checkpoint(tmp_path)                       # the folder holding model_best.pth.tar
    assert type(net) is WRN28_10 and net.variant == "tim" and not net.training and tuple(fc.weight.shape) == (64, 640)
    assert count_params(net) + count_params(fc) == count_params(their_wrn)
    x = imagenet_normalize(torch.randint(0, 256, (2, 3, 32, 32), dtype=torch.uint8, generator=torch.Generator().manual_seed(1)))
    with torch.no_grad():
        f_ref, l_ref = their_wrn(x, feature=True)
        f = net(x); logits = fc(f)
    assert float((f - f_ref).abs().max()) < 1e-5 and float((logits - l_ref).abs().max()) < 1e-5
    assert float((f_ref[0] - f_ref[1]).abs().max()) > 1e-3           # the tolerance tells the two images apart
    with torch.no_grad():                                               # the S2M2 variant is another network
        s2m2 = WRN28_10().eval()
        s2m2.load_state_dict({k: v for k, v in net.state_dict().items() if not (k.endswith(".bias") and ("conv" in k or "shortcut" in k or k == "stem.bias"))})
        assert float((s2m2(x) - f_ref).abs().max()) > 1e-3
    assert load_released_checkpoint(ck, arch="wideres")[1].weight.shape == (64, 640)


def test_wideres_without_prefix_and_other_classes(their_wrn, tmp_path):
    "Keys without 'module.' (a model saved outside DataParallel) load too; the number of classes comes from the file."
    sd = {k: v for k, v in their_wrn.state_dict().items()}
    sd["linear.weight"], sd["linear.bias"] = torch.randn(351, 640), torch.randn(351)   # tiered-ImageNet's 351 base classes
    torch.save(sd, tmp_path/"bare.pt")
    with pytest.raises(ValueError, match="does not say its architecture"): load_released_checkpoint(tmp_path/"bare.pt")
    net, fc = load_released_checkpoint(tmp_path/"bare.pt", arch="wideres")
    assert tuple(fc.weight.shape) == (351, 640) and torch.equal(fc.bias, sd["linear.bias"])
    assert torch.equal(net.layers[8].shortcut.weight, sd["layer3.0.shortcut.0.weight"])


def test_key_maps_are_one_to_one():
    "Every key of our modules has exactly one authors' name, and the renaming follows the documented pattern."
    for arch, name, kw in (("resnet18", "resnet18", {}), ("wideres", "wrn28_10", dict(variant="tim"))):
        km = released_key_map(arch)
        with torch.device("meta"): ours = make_backbone(name, **kw).state_dict()
        targets = [o for o, _ in km.values()]
        assert len(set(targets)) == len(targets) == len(ours) + 2, arch
        assert set(targets) == {f"backbone.{k}" for k in ours} | {"fc.weight", "fc.bias"}, arch
        for theirs, (o, shape) in km.items():
            if o.startswith("backbone."): assert tuple(ours[o[len("backbone."):]].shape) == shape, theirs
    km = released_key_map("wideres")
    assert km["layer2.3.conv2.bias"][0] == "backbone.layers.7.conv2.bias" and km["bn1.running_mean"][0] == "backbone.bn.running_mean"
    assert released_key_map("resnet18")["layer4.1.bn2.bias"][0] == "backbone.layers.3.1.bn2.bias"


def test_missing_key_is_named():
    sd = {f"module.{k}": v for k, v in _resnet18_state().items() if k != "layer2.1.conv1.weight"}
    with pytest.raises(CheckpointMismatchError, match=r"1 missing and 0 unexpected.*First missing: 'layer2.1.conv1.weight'"):
        from_released_state_dict(sd, "resnet18")


def test_unexpected_key_is_named():
    sd = {**_resnet18_state(), "layer5.0.conv1.weight": torch.zeros(1)}
    with pytest.raises(CheckpointMismatchError, match=r"First missing: none. First unexpected: 'layer5.0.conv1.weight'"):
        from_released_state_dict(sd, "resnet18")


def test_batch_counters_are_optional():
    "Older checkpoints lack BatchNorm's num_batches_tracked, which eval mode does not use."
    sd = {k: v for k, v in _resnet18_state().items() if not k.endswith("num_batches_tracked")}
    net, _ = from_released_state_dict(sd, "resnet18")
    assert torch.equal(net.stem[1].running_var, sd["bn1.running_var"])


def test_wrong_architecture(their_wrn, tmp_path):
    "A wide ResNet's weights loaded as a ResNet-18 (and the reverse) name the keys and the architecture that fits."
    with pytest.raises(CheckpointMismatchError) as e:
        from_released_state_dict({f"module.{k}": v for k, v in their_wrn.state_dict().items()}, "resnet18")
    msg = str(e.value)
    assert "First missing: 'layer2.0.downsample.0.weight'" in msg and "First unexpected: 'conv1.bias'" in msg
    assert "pass arch='wideres'" in msg and isinstance(e.value, ValueError)
    with pytest.raises(CheckpointMismatchError, match="pass arch='resnet18'"):
        from_released_state_dict(_resnet18_state(), "wideres")
    ck = _save_authors_way(their_wrn, tmp_path/"w.pth.tar", "wideres")
    with pytest.raises(ValueError, match="says arch 'wideres', but arch='resnet18'"):
        load_released_checkpoint(ck, arch="resnet18")
    with pytest.raises(ValueError, match="'resnet18' or 'wideres'"):
        load_released_checkpoint(ck, arch="wrn28_10")                 # our name, not the authors'


def test_wrong_shapes():
    sd = _resnet18_state()
    sd["layer1.0.conv1.weight"] = torch.zeros(64, 64, 5, 5)
    with pytest.raises(CheckpointMismatchError, match=r"layer1.0.conv1.weight \(64, 64, 5, 5\) \(expected \(64, 64, 3, 3\)\)"):
        from_released_state_dict(sd, "resnet18")
    sd = _resnet18_state()
    sd["fc.weight"] = torch.zeros(64, 640)                              # a classifier for 640 features, not 512
    with pytest.raises(CheckpointMismatchError, match=r"fc.weight \(64, 640\) \(expected \(64, 512\)\)"):
        from_released_state_dict(sd, "resnet18")


def test_corrupt_files(tmp_path, their_wrn):
    ck = _save_authors_way(their_wrn, tmp_path/"good.pth.tar", "wideres")
    data = ck.read_bytes()
    for name, content in (("cut.pth.tar", data[:len(data) // 3]), ("junk.pth.tar", b"not a checkpoint" * 100)):
        (tmp_path/name).write_bytes(content)
        with pytest.raises(ValueError, match="corrupt or truncated"): load_released_checkpoint(tmp_path/name)
    (tmp_path/"empty.pth.tar").write_bytes(b"")
    with pytest.raises(ValueError, match="is empty"): load_released_checkpoint(tmp_path/"empty.pth.tar")
    with pytest.raises(FileNotFoundError, match="no checkpoint at"): load_released_checkpoint(tmp_path/"nope.pth.tar")
    with pytest.raises(FileNotFoundError, match="without model_best.pth.tar"): load_released_checkpoint(tmp_path)
    torch.save(dict(epoch=1, arch="resnet18"), tmp_path/"nostate.pth.tar")
    with pytest.raises(ValueError, match="not the authors' format"): load_released_checkpoint(tmp_path/"nostate.pth.tar")


def test_python_objects_need_trust(tmp_path):
    "A checkpoint holding arbitrary Python objects is not unpickled unless trusted; trusted, its state_dict loads."
    path = tmp_path/"obj.pth.tar"
    torch.save(dict(arch="resnet18", state_dict={f"module.{k}": v for k, v in _resnet18_state().items()}, extra=NotATensor()), path)
    with pytest.raises(ValueError, match=r"holds Python objects \(test_released_checkpoints.NotATensor\), which are not loaded.*trust=True"): load_released_checkpoint(path)
    net, fc = load_released_checkpoint(path, trust=True)
    assert type(net) is ResNet18 and tuple(fc.weight.shape) == (64, 512)


def test_imagenet_normalize():
    b = torch.tensor([0, 255, 124], dtype=torch.uint8).view(1, 3, 1, 1).expand(2, 3, 2, 2)
    x = imagenet_normalize(b)
    expect = torch.tensor([(0 - 0.485) / 0.229, (1 - 0.456) / 0.224, (124 / 255 - 0.406) / 0.225])
    assert x.dtype == torch.float32 and torch.allclose(x[1, :, 1, 0], expect, atol=1e-6)
    assert torch.allclose(imagenet_normalize(b[0].numpy()), x[0], atol=1e-7)          # one image, as an array
    with pytest.raises(ValueError, match="divide by 255"): imagenet_normalize(b.float())
    with pytest.raises(ValueError, match="channels-last"): imagenet_normalize(b.permute(0, 2, 3, 1).contiguous())


def test_backbone_registry():
    "The backbones are a Registry: make_backbone / list_backbones, and the dict-like uses of BACKBONES still work."
    assert {"conv4", "resnet12", "resnet18", "wrn28_10"} <= set(list_backbones())
    assert list_backbones() == sorted(list_backbones()) == list(BACKBONES) == BACKBONES.keys()
    assert "resnet18" in BACKBONES and BACKBONES["resnet18"] is ResNet18
    assert make_backbone("conv4", width=8).out_dim == 8 * 1 * 1 and make_backbone("wrn28_10", variant="tim").variant == "tim"
    with pytest.raises(ValueError, match="did you mean 'resnet18'"): make_backbone("resnet81")
