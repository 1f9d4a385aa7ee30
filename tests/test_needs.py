"""What a script needs: GPU devices and packages beyond TVM."""

from __future__ import annotations

import pytest

from bot.needs import GPU_DEVICES, detect_needs, device_of_string


def test_gpu_devices() -> None:
    assert GPU_DEVICES == ("cuda", "rocm", "vulkan", "metal", "opencl")


@pytest.mark.parametrize("script,need", [
    ("import tvm\ndev = tvm.cuda(0)\n", "cuda"),
    ("import tvm\nctx = tvm.gpu()\n", "cuda"),
    ("import tvm\nt = tvm.target.Target('cuda -arch=sm_80')\n", "cuda"),
    ("import tvm\nt = tvm.target.Target('nvidia/geforce-rtx-3090')\n", "cuda"),
    ("import tvm\nlib = tvm.compile(m, target='cuda')\n", "cuda"),
    ("import tvm\ntarget = 'nvptx -mcpu=sm_86'\n", "cuda"),
    ("import tvm\nt = tvm.target.cuda()\n", "cuda"),
    ("import tvm\nd = tvm.device('cuda', 0)\n", "cuda"),
    ("import tvm\nd = tvm.device('gpu')\n", "cuda"),
    ("import torch\nx = torch.ones(2).cuda()\n", "cuda"),
    ("import torch\nx = torch.ones(2, device='cuda:0')\n", "cuda"),
    ("import tvm\nd = tvm.rocm(0)\n", "rocm"),
    ("import tvm\nt = 'rocm -mcpu=gfx90a'\n", "rocm"),
    ("import tvm\nd = tvm.vulkan(0)\n", "vulkan"),
    ("import tvm\nt = tvm.target.Target('metal')\n", "metal"),
    ("import tvm\nt = tvm.target.Target('apple/m2-gpu')\n", "metal"),
    ("import tvm\nt = 'opencl -device=mali'\n", "opencl"),
    ("import tvm\nd = tvm.opencl(0)\n", "opencl"),
    ("import tvm\nt = tvm.target.Target({'kind': 'cuda', 'arch': 'sm_90'})\n", "cuda"),
])
def test_devices(script: str, need: str) -> None:
    assert need in detect_needs(script)


@pytest.mark.parametrize("script", [
    "import tvm\nlib = tvm.compile(m, target='llvm')\ndev = tvm.cpu(0)\n",
    "import tvm\n# runs fine on cuda too\nprint(tvm.cpu())\n",
    "import tvm\nprint('cuda kernels are not involved here')\n",
    "import tvm\nprint(tvm.runtime.enabled('cuda') is not None)\nx = 'gpu is idle'\n",
])
def test_no_device(script: str) -> None:
    needs = detect_needs(script)
    assert not set(needs) & set(GPU_DEVICES), needs


@pytest.mark.parametrize("module,need", [
    ("torch", "torch"), ("torchvision.models", "torch"), ("onnx", "onnx"),
    ("onnxruntime", "other:onnxruntime"), ("tensorflow", "tensorflow"),
    ("tflite.Model", "other:tflite"), ("keras", "other:keras"), ("tf_keras", "other:keras"),
    ("mxnet", "other:mxnet"), ("paddle", "other:paddle"),
    ("tensorrt", "other:tensorrt"), ("mlc_llm", "other:mlc_llm"), ("scipy.special", "other:scipy"),
])
def test_packages(module: str, need: str) -> None:
    assert detect_needs(f"import {module}\n") == (need,)
    assert detect_needs(f"from {module} import x\n") == (need,)


@pytest.mark.parametrize("script", [
    "import tvm\nfrom tvm import relax\nimport tvm.script.tirx as T\n",
    "import numpy as np\nimport ml_dtypes\nimport tvm_ffi\n",
    "import os, sys, re, json, ctypes, multiprocessing, pathlib\n",
    "from __future__ import annotations\nfrom . import helper\n",
])
def test_not_needs(script: str) -> None:
    assert detect_needs(script) == ()


def test_sorted_and_deduplicated() -> None:
    script = (
        "import torch\nimport torchvision\nimport onnx\nimport mlc_llm\nimport tvm\n"
        "dev = tvm.cuda(0)\nx = torch.zeros(1).cuda()\nt = 'cuda'\n"
    )
    assert detect_needs(script) == ("cuda", "onnx", "other:mlc_llm", "torch")


def test_script_that_does_not_parse_still_gets_its_imports() -> None:
    assert detect_needs("import torch\nprint 'hi'\nx = tvm.cuda(0)\n") == ("cuda", "torch")


def test_device_of_string() -> None:
    assert device_of_string("cuda") == "cuda"
    assert device_of_string("cuda:1") == "cuda"
    assert device_of_string("cuda -keys=cuda,gpu -max_num_threads=1024") == "cuda"
    assert device_of_string("llvm -mcpu=skylake") is None
    assert device_of_string("cuda is great") is None
    assert device_of_string("amd/mi300") == "rocm"


@pytest.mark.parametrize("script,need", [
    ("import tvm\nmod = tvm.relax.frontend.onnx.from_onnx(m, shape_dict=s)\n", "onnx"),
    ("from tvm import relay\nmod, params = relay.frontend.from_onnx(m, shape)\n", "onnx"),
    ("from tvm import relay\nmod, params = relay.frontend.from_pytorch(m, [])\n", "torch"),
    ("from tvm.relax.frontend.torch import from_fx\nmod = from_fx(g, [])\n", "torch"),
    ("from tvm.relax.frontend.torch import from_exported_program\n", "torch"),
    ("import tvm\nmod = tvm.relay.frontend.from_tflite(m)\n", "other:tflite"),
    ("from tvm.relay import frontend\nmod = frontend.from_keras(m)\n", "other:keras"),
    ("from tvm.relay.frontend import from_paddle\nmod = from_paddle(m)\n", "other:paddle"),
    ("from tvm import relay\nmod = relay.frontend.from_tensorflow(graph)\n", "tensorflow"),
    ("import tvm.relax.frontend.onnx\n", "onnx"),
    # does not parse: found in the text
    ("import tvm\nmod = relay.frontend.from_onnx(m,\n", "onnx"),
])
def test_frontend_calls_need_the_framework(script: str, need: str) -> None:
    assert need in detect_needs(script)


@pytest.mark.parametrize("script", [
    "from tvm.relax.frontend import nn\nclass M(nn.Module):\n    pass\n",
    "import tvm\nfrom tvm.relax.frontend import detach_params\nmod, p = detach_params(m)\n",
    "import tvm\nx = tvm.relax.frontend\n",
    "import tvm\ny = obj.from_onnx(m)\n",  # not a TVM frontend
])
def test_tvm_own_frontend_helpers_need_nothing(script: str) -> None:
    assert detect_needs(script) == ()


@pytest.mark.parametrize(
    "text, needs",
    [
        ("Build with USE_CUDA ON and USE_TENSORRT_CODEGEN ON, then run the TensorRT tests.",
         ("cuda", "other:tensorrt")),
        ("The compiled model does not match the PyTorch reference.", ("torch",)),
        ("Converting my ONNX model fails; ONNX Runtime gives the right answer.",
         ("onnx", "other:onnxruntime")),
        ("Environment: Ubuntu 22.04, CUDA 12.1, LLVM 17", ()),  # a listed version is no need
        ("Compiling with target=\"cuda\" crashes", ("cuda",)),
        ("Thanks for participating! ### Expected behavior What you were expecting", ()),
    ],
)
def test_needs_named_in_prose(text, needs):
    from bot.needs import needs_from_text

    assert needs_from_text(text) == needs


def test_an_issue_without_a_script_takes_its_needs_from_the_text():
    from bot.models import Issue
    from bot.plan import plan

    p = plan(Issue(title="[Bug] results diverge from the PyTorch reference",
                   body="Mismatched elements: 1 / 8\n\nThe model is in the attached zip.",
                   author="a"))
    assert not p.repro.found
    assert p.needs == ("torch",)


def test_a_device_named_by_the_scripts_argument_is_needed():
    """`python repro.py cuda` runs the script on cuda: a GPU worker's job."""
    from bot.models import Issue
    from bot.plan import plan

    script = ("import sys\nimport tvm\ntarget = sys.argv[1] if len(sys.argv) > 1 else 'llvm'\n"
              "print(tvm.target.Target(target))\n")
    for line, needs, worker in (("python repro.py cuda", ("cuda",), "gpu"),
                                ("python repro.py llvm", (), "cpu")):
        p = plan(Issue(title="[Bug] nan on gpu", author="a",
                       body=f"```python\n{script}```\n\n```\n$ {line}\n```\n"))
        assert p.repro.args == (line.split()[-1],)
        assert (p.needs, p.worker) == (needs, worker)


@pytest.mark.parametrize(
    "text, needs",
    [
        ("运行mlc_chat命令时出错", ("other:mlc_llm",)),
        ("$ mlc_llm compile ./dist/model", ("other:mlc_llm",)),
        ("File \"/home/u/mlc-llm/cpp/llm_chat.cc\", line 3", ("other:mlc_llm",)),
        ("This is an MLC-LLM bug report template; pip install mlc-ai-nightly", ()),
    ],
)
def test_mlc_llm_used_in_prose(text, needs):
    from bot.needs import needs_from_text

    assert needs_from_text(text) == needs


@pytest.mark.parametrize(
    "text, needs",
    [
        ("Compiling with the cuda target fails.", ("cuda",)),
        ("I followed tune_conv2d_cuda.html and it crashed", ("cuda",)),
        ("Environment: CUDA 11.7, cuDNN 8", ()),
    ],
)
def test_device_named_in_prose(text, needs):
    from bot.needs import needs_from_text

    assert needs_from_text(text) == needs
