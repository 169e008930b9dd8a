"""torchvision's MNIST, FashionMNIST and CIFAR10 read sample by sample: lengths, classes, data and
targets, every image (type, mode, size, pixels) and label, with and without ``transform`` /
``target_transform``, negative and out-of-range indices, batches through a DataLoader, the
repr, and the error for a missing dataset. tests/test_vision.py runs it on files it generates,
through tinynet's compat runner and through torchvision, and compares the two JSON dumps.

The CIFAR-10 batches are the test's own, not the published ones: torchvision checks each pickled
batch against an MD5 of its class attributes, so the subclass below gives it the digests of the
generated batches (``--cifar-md5``). tinynet reads the binary batches the test writes beside
them from the same arrays, and ignores those attributes.
"""
import argparse
import json
import os
import re

import numpy
import torch
from torchvision import datasets, transforms

MEAN, STD = (0.25, 0.5, 0.75), (0.5, 0.25, 2.0)


def _dtype(d):
    return str(d).replace("torch.", "")


def _image(img):
    return {"type": type(img).__name__, "mode": img.mode, "size": list(img.size),
            "pixels": numpy.asarray(img).tolist()}


def _tensor(t):
    return {"shape": list(t.shape), "dtype": _dtype(t.dtype), "values": t.double().flatten().tolist()}


def _repr(ds, root):
    return re.sub(r" at 0x[0-9a-f]+", "", repr(ds).replace(str(root), "ROOT"))


def _outcome(fn):
    """What calling ``fn`` raised, as the built-in classes a program would catch."""
    try:
        fn()
    except Exception as exc:
        return {kind.__name__: isinstance(exc, kind)
                for kind in (IndexError, RuntimeError, FileNotFoundError, OSError, ValueError)}
    return "no error"


def describe(cls, root, train, channels):
    plain = cls(root, train=train)
    norm = transforms.Normalize(MEAN[:channels], STD[:channels])
    shaped = cls(root, train=train, download=True, transform=transforms.Compose([transforms.ToTensor(), norm]),
                 target_transform=lambda t: 10 * t + 1)
    only_target = cls(root, train=train, target_transform=lambda t: -t)
    data = plain.data
    out = {"len": len(plain), "classes": list(plain.classes), "class_to_idx": plain.class_to_idx,
           "data_type": type(data).__name__, "data_shape": list(data.shape), "data_dtype": _dtype(data.dtype),
           "data": numpy.asarray(data).tolist(),
           "targets_type": type(plain.targets).__name__,
           "targets": [int(t) for t in plain.targets],
           "repr": _repr(plain, root), "repr_transformed": _repr(shaped, root),
           "items": [], "shaped": [], "only_target": [],
           "last": [_image(plain[-1][0]), plain[-1][1]],
           "past_the_end": _outcome(lambda: plain[len(plain)])}
    for i in range(len(plain)):
        img, label = plain[i]
        out["items"].append([_image(img), label, type(label).__name__])
        x, y = shaped[i]
        out["shaped"].append([_tensor(x), y, type(y).__name__])
        img, y = only_target[i]
        out["only_target"].append([type(img).__name__, y])
    loader = torch.utils.data.DataLoader(cls(root, train=train, transform=shaped.transform), batch_size=5)
    out["batches"] = [[_tensor(x), _tensor(y)] for x, y in loader]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--cifar-md5", required=True)
    args = p.parse_args()
    with open(args.cifar_md5) as f:
        md5 = json.load(f)
    cifar = type("CIFAR10", (datasets.CIFAR10,), {
        "train_list": [[f"data_batch_{i}", md5[f"data_batch_{i}"]] for i in range(1, 6)],
        "test_list": [["test_batch", md5["test_batch"]]],
        "meta": {"filename": "batches.meta", "key": "label_names", "md5": md5["batches.meta"]}})
    results = {}
    for name, cls, channels in (("MNIST", datasets.MNIST, 1), ("FashionMNIST", datasets.FashionMNIST, 1),
                                ("CIFAR10", cifar, 3)):
        for train in (True, False):
            results[f"{name}/{'train' if train else 'test'}"] = describe(cls, args.root, train, channels)
        results[f"{name}/missing"] = _outcome(lambda: cls(os.path.join(args.root, "nothing here")))
    with open(args.out, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
