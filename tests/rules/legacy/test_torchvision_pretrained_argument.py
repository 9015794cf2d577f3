"""TL704 torchvision-pretrained-argument beyond its embedded examples."""

from __future__ import annotations


def test_tl704_non_literal_pretrained_gets_a_hint(findings):
    (f,) = findings("import torchvision\nm = torchvision.models.vgg16(pretrained=use_pt)\n", "TL704")
    assert f.fix is None and "if use_pt else None" in f.message


def test_tl704_silent_on_a_hub_release_before_weights(findings):
    # issue 27: `weights=None` on v0.9.0, whose builders have no `weights=` (TypeError)
    src = "import torch\nm = torch.hub.load('pytorch/vision:v0.9.0', 'mobilenet_v2', pretrained=False)\n"
    assert findings(src, "TL704") == []


def test_tl704_hub_releases_from_0_13_and_branches_are_fixed(findings):
    for repo in ("pytorch/vision:v0.13.0", "pytorch/vision:main", "pytorch/vision"):
        (f,) = findings(f"import torch\nm = torch.hub.load('{repo}', 'resnet18', pretrained=False)\n", "TL704")
        assert f.fix is not None, repo


def test_tl704_no_fix_on_a_hub_tag_that_names_no_release(findings):
    (f,) = findings(
        "import torch\nm = torch.hub.load('pytorch/vision:my-fork', 'resnet18', pretrained=False)\n", "TL704"
    )
    assert f.fix is None


def test_tl704_safe_only_where_the_arguments_bind_to_the_builder_signature(findings):
    # issue 27 item 2: `weights=None` is safe only when every argument binds to the builder's signature
    # since torchvision 0.13 (_signatures.py): not through `**kwargs` (it may hold `weights`), not for a
    # builder whose signature is not known (a subpackage's), not for a hub model named by a variable
    cases = {
        "torchvision.models.resnet18(pretrained=False, num_classes=10)": "safe",
        "torchvision.models.resnet18(pretrained=False, **cfg)": "unsafe",
        "torchvision.models.detection.fasterrcnn_resnet50_fpn(pretrained=False, num_classes=3)": "safe",
        "torchvision.models.detection.maskrcnn_resnet50_fpn(pretrained=False)": "unsafe",
        "torch.hub.load('pytorch/vision', 'resnet18', pretrained=False, force_reload=True)": "safe",
        "torch.hub.load('pytorch/vision', name, pretrained=False)": "unsafe",
        "torch.hub.load('pytorch/vision', 'resnet18', *extra, pretrained=False)": "unsafe",
    }
    for call, applicability in cases.items():
        (f,) = findings(f"import torch\nimport torchvision\nm = {call}\n", "TL704")
        assert f.fix is not None and f.fix.applicability.value == applicability, call
        assert applicability == "safe" or f.fix.risk, call
