"""The failure vocabulary: what words in a run's output, or in a report, mean.

One table of text knowledge read by both :mod:`bot.classify` (what the run printed) and
:mod:`bot.reported` (what the reporter pasted), so the two read a failure by the same rules:
crash signals and their words, "the device is absent" messages, import and attribute errors
about TVM names (``tvm.*``, and the packages TVM once shipped: ``nnvm``, ``topi``, ``vta``),
which exception types are the script's own, wrong-result words, and the issue template's
section headings and boilerplate.

Pure: constants, compiled patterns (each linear in its input: bounded repetitions, no nested
quantifiers that can backtrack over a whole line) and small functions over strings.
"""

from __future__ import annotations

import re

from bot import lazyre

# --------------------------------------------------------------------------------------------
# Crashes

# Signals that mean the process crashed (not killed by us).
CRASH_SIGNALS: dict[int, str] = {
    4: "Illegal instruction",
    5: "Trace/breakpoint trap",
    6: "Aborted",
    7: "Bus error",
    8: "Floating point exception",
    11: "Segmentation fault",
}
SIGNAL_NAMES: dict[int, str] = {
    4: "SIGILL",
    5: "SIGTRAP",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    11: "SIGSEGV",
    15: "SIGTERM",
}
FATAL_RE = lazyre.compile(
    r"Fatal Python error: (Segmentation fault|Aborted|Bus error|Floating point exception|"
    r"Illegal instruction)"
)
FATAL_TO_SIGNAL = {name: sig for sig, name in CRASH_SIGNALS.items()}

# faulthandler's frame line ("  File "x.py", line 5 in f"): no comma before "in".
FAULTHANDLER_FRAME_RE = lazyre.compile(r'^\s*File "[^"]*", line \d+ in \S')
CRASH_CONTEXT_RE = lazyre.compile(
    r"free\(\)|double free|corrupted|malloc\(\)|munmap_chunk|terminate called|"
    r"what\(\):|Check failed|Fatal Python error|Segmentation fault|core dumped|"
    r"stack smashing|AddressSanitizer|heap-buffer-overflow|Segfault encountered|"
    r"Aborted|Bus error|Floating point exception|Illegal instruction",
)

# --------------------------------------------------------------------------------------------
# TVM's own words

BACKTRACE_NOTE = "note: run with `TVM_BACKTRACE=1`"

# The VM's check of a call's arguments against the function's signature: "Check failed:
# input_shape[i] == reg (17 vs. 16) : ErrorContext(fn=main, loc=param[0], ...)" -- the caller's
# wrong input refused, a user-facing error (classify and reported read it alike).
VM_ARGUMENT_CHECK = "ErrorContext(fn="

# --------------------------------------------------------------------------------------------
# The device the script wants is absent

# The device the script wants is absent on this worker.
DEVICE_ABSENT_RE = lazyre.compile(
    r"Device ?API (?:cuda|rocm|vulkan|metal|opencl|gpu) is not enabled"
    r"|Device type (?:cuda|rocm|vulkan|metal|opencl|gpu) is not enabled"
    r"|no CUDA-capable device"
    # A TVM (or framework) built without the device's runtime or code generator.
    r"|\b(?:CUDA|ROCm|HIP|Vulkan|OpenCL|Metal|NVRTC|cuDNN|cuBLAS) (?:runtime |support |backend )?"
    r"(?:is )?not (?:linked|enabled|available|built|compiled|included)"
    r"|\bTarget (?:cuda|rocm|vulkan|metal|opencl|nvptx) is not enabled"
    # a library exported with device code, loaded where that device's runtime is absent
    r"|created using \{(?:cuda|rocm|hip|vulkan|metal|opencl)\} but a loader of that name is not "
    r"registered"
    r"|\btarget\.build\.(?:cuda|rocm|vulkan|metal|opencl|nvptx)\b"
    r"|\bno (?:CUDA |ROCm |HIP |Vulkan |OpenCL |Metal )?(?:GPUs?|devices?) (?:is |are |was |were )?"
    r"(?:available|found|detected|present)"
    r"|\bno (?:CUDA|ROCm|HIP|Vulkan|OpenCL|Metal|GPU)[\w -]{0,20} (?:devices?|GPUs?|platforms?) "
    r"(?:is |are |was |were )?(?:available|found|detected|present)"
    r"|VK_ERROR_INCOMPATIBLE_DRIVER|VK_ERROR_INITIALIZATION_FAILED"
    r"|CL_PLATFORM_NOT_FOUND_KHR|No OpenCL platform|clGetPlatformIDs[^\n]{0,40}-1001"
    r"|MTLCreateSystemDefaultDevice[^\n]{0,40}(?:nil|null|failed)"
    r"|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|hipErrorNoDevice"
    r"|Found no NVIDIA driver|NVIDIA driver on your system is too old"
    r"|CUDA driver version is insufficient"
    r"|Torch not compiled with CUDA enabled"
    # a GPU library TVM was built without (``USE_CUDNN=OFF``): its functions are not registered
    r"|Cannot find global function tvm\.contrib\.(?:cudnn|cublas|cublaslt|cutlass|thrust|rocblas|"
    r"miopen|hipblas|nccl|tensorrt|nvshmem)\b"
    r"|lib(?:cuda|cudart|nvrtc|cublas|cudnn|nvinfer|amdhip64|vulkan|OpenCL)[\w.\-]{0,40}: cannot open shared object"
    r"|(?:cannot|can't|could not|unable to) find[^\n]{0,40}\b(?:cuda|nvcc|rocm|hip|vulkan|opencl|gpu)\b"
    r"|CUDA_ERROR_(?:NOT_INITIALIZED|INVALID_DEVICE|NO_DEVICE)|cudaErrorInsufficientDriver"
    r"|cudaErrorInitializationError|CUDA: initialization error"
    r"|No such file or directory: '(?:nvcc|nvidia-smi|hipcc|rocm-smi)'"
    r"|\b(?:cuda|gpu|rocm|vulkan|opencl|metal|nvcc|hipcc)\b[^\n]{0,40}\b(?:is |are )?(?:not available|unavailable|"
    r"not enabled|not found|not detected|not present|does not exist|doesn't exist)",
    re.IGNORECASE,
)
# Every device-absent message holds one of these (lower-cased): a cheap test first, since the
# full pattern (case-insensitive, many alternatives) costs ~100x more per line.
_DEVICE_HINT_RE = lazyre.compile(
    r"cuda|gpu|rocm|vulkan|opencl|metal|nvcc|nvptx|hip|nvidia|driver|device|vk_error|cl_platform"
    r"|clgetplatformids|nvrtc|cudnn|cublas|nvinfer|cutlass|thrust|rocblas|miopen|hipblas|nccl"
    r"|tensorrt|nvshmem"
)


# ... and one of these words of absence (a flood of "cuda gpu cuda gpu" has none).
_ABSENCE_HINT_RE = lazyre.compile(
    r"not |n't|no |no_|nodevice|unavailable|too old|insufficient|cannot|can't|could not|unable"
    r"|initialization|_error|error_|target\.build|platform|-1001|mtlcreate"
)
# Longer than this, a line is not one of these messages: only its start is read.
_DEVICE_LINE_MAX = 8192


def device_absent(text: str) -> bool:
    """``text`` says the device the script wants (or its runtime) is absent here. Cheap tests
    first: the full pattern (case-insensitive, many alternatives) costs ~100x more per
    character, so it runs only on text that has both a device word and a word of absence."""
    low = text.lower()
    if not _DEVICE_HINT_RE.search(low) or not _ABSENCE_HINT_RE.search(low):
        return False
    if len(text) <= _DEVICE_LINE_MAX:
        return bool(DEVICE_ABSENT_RE.search(text))
    return any(
        DEVICE_ABSENT_RE.search(line[:_DEVICE_LINE_MAX]) for line in text.split("\n")
    )


# A device-absent line that is the failure itself (an exception, an abort's message), not a
# warning printed on the way (torch's "UserWarning: CUDA initialization: ...").
DEVICE_FAILURE_LINE_RE = lazyre.compile(r"Error|Exception|what\(\):|Check failed|terminate called")
DEVICE_WORD_RE = lazyre.compile(r"\b(?:cuda|gpu|rocm|vulkan|opencl|metal|nvcc)\b", re.IGNORECASE)
EXIST_CHECK_RE = lazyre.compile(r"\.exist\b|is_available\(\)|device_count\(\)")

# --------------------------------------------------------------------------------------------
# Wrong results

# Words that say "the numbers are wrong".
WRONG_RESULT_RE = lazyre.compile(
    r"mismatch|not equal|not close|are not (?:the )?same|differ|"
    r"wrong (?:result|output|answer|value)|incorrect (?:result|output|value|answer)|"
    r"inconsistent|results? (?:do not|don't) match",
    re.IGNORECASE,
)
TESTING_PATH_RE = lazyre.compile(r"numpy/testing/|/tvm/testing/|torch/testing/|/unittest/case\.py")
TESTING_MSG_RE = lazyre.compile(
    r"Mismatched elements|Not equal to tolerance|Arrays are not (?:almost )?equal|"
    r"Items are not equal|Tensor-likes are not (?:close|equal)|Scalars are not (?:close|equal)|"
    # numpy's assert_allclose when NaN or inf stand in other places: "x and y nan location mismatch"
    r"\b(?:nan|[+-]?inf) location mismatch",
)

# --------------------------------------------------------------------------------------------
# Import and attribute errors: TVM's names, other packages

# Packages that once shipped with TVM itself (``import nnvm``, ``import topi``): a script that
# imports one targets an old TVM, not a missing third-party package.
HISTORIC_TVM_PACKAGES = frozenset({"nnvm", "topi", "vta"})


def is_tvm_name(name: str) -> bool:
    """``tvm``, ``tvm.*``, ``tvm_ffi*``, and the packages TVM once shipped (``nnvm``, ``topi``,
    ``vta``): a failed import of one means "another TVM", never "install a package"."""
    return (
        name == "tvm"
        or name.startswith(("tvm.", "tvm_ffi"))
        or name.split(".")[0] in HISTORIC_TVM_PACKAGES
    )


NO_MODULE_RE = lazyre.compile(r"No module named '([^']+)'")
CANNOT_IMPORT_RE = lazyre.compile(r"cannot import name '([^']+)' from '([^']+)'")
MODULE_ATTR_RE = lazyre.compile(r"module '([^']+)' has no attribute '([^']+)'")
# TVM saying that a form the script uses is gone ("CLI target string form (e.g. "llvm
# -mcpu=xxx") is no longer supported"): the script targets another TVM API.
REMOVED_FORM_RE = lazyre.compile(
    r"\b(?:is|are) no longer (?:supported|accepted|available|allowed|valid)\b"
    r"|\b(?:has|have) been (?:removed|dropped|deprecated and removed)\b"
    # (not a schedule's own state: "ValueError: The loop no longer exists in the IRModule")
    r"|\bwas removed (?:in|from|since)\b|\bno longer exists?\b(?! in the (?:IRModule|module|schedule)\b)",
    re.IGNORECASE,
)
# A target's name given as a device (``tvm.device("llvm", 0)``): older TVM took it for the CPU.
TARGET_AS_DEVICE_RE = lazyre.compile(r"\bUnknown device:? '?(?:llvm|c|stackvm)'?(?![\w-])")
OBJECT_ATTR_RE = lazyre.compile(
    # (a runtime Module says it its own way: "Module has no function 'get_source'")
    r"(?:'([\w.]+)' object|type object '([\w.]+)'|\b(Module|Executable)) has no "
    r"(?:attribute|function) '([^']+)'"
)
_SHARED_LIB_MSG = ": cannot open shared object file"
_SHARED_LIB_NAME_RE = lazyre.compile(r"[\w.+\-]+\.so[\w.]*$")


def shared_library(text: str) -> str:
    """The library a loader error names ("libcudart.so.12: cannot open shared object file"),
    or "" (looked for in a bounded window before the message: linear in ``text``)."""
    at = text.find(_SHARED_LIB_MSG)
    for _ in range(3):  # the first few messages; a flood of them is not a library name
        if at < 0:
            break
        m = _SHARED_LIB_NAME_RE.search(text, max(0, at - 200), at)
        if m is not None:
            return m.group(0)
        at = text.find(_SHARED_LIB_MSG, at + 1)
    return ""

REQUIRED_RE = lazyre.compile(
    r"^\s*(?:[\w.]+:\s*)?`?([A-Za-z_][\w.\-]*)`? (?:package )?is required\b"
    r"|\b(?:pip3?|conda|python3? -m pip) install (?:-U |--upgrade |--user )*['\"`]?([A-Za-z_][\w.\-]*)"
    r"|\brequires (?:the )?`?([A-Za-z_][\w\-]*)`? (?:package|module|library)\b",
    re.MULTILINE,
)
# Exceptions that are the script's own doing (its code, not TVM), wherever they are printed.
SCRIPT_ERROR_TYPES = frozenset(
    {"NameError", "SyntaxError", "IndentationError", "TabError", "UnboundLocalError"}
)
WRAPPER_TYPES = frozenset({"DiagnosticError", "ParserError", "TVMError", "RuntimeError"})
# Exception types only TVM raises (by their short name): an error of TVM's, whatever its frames.
TVM_ERROR_TYPES = frozenset({"TVMError", "DiagnosticError", "ScheduleError", "ParserError"})


def required_package(text: str) -> str | None:
    """The non-TVM package an import error's message asks for ("onnx is required", "pip install
    onnx"), if any."""
    for m in REQUIRED_RE.finditer(text):
        name = next(g for g in m.groups() if g)
        top = name.split("[")[0].split(".")[0]
        if top and not is_tvm_name(top) and top.lower() not in {"apache-tvm", "tvm", "it", "this"}:
            return top
    return None


# A name the code read and nothing bound (Python's NameError).
NAME_ERROR_RE = lazyre.compile(r"name '([A-Za-z_]\w*)' is not defined")
# A function's body pasted alone.
OUTSIDE_FUNCTION_RE = lazyre.compile(r"'(return|yield|await|nonlocal)' outside (?:async )?function")

# A file that is not there: Python's words, and TVM's (``tvm.runtime.load_module`` raises
# ``ValueError: cannot find file build/model.so``); group 1 or 2 is the path.
NO_SUCH_FILE_RE = lazyre.compile(
    r"No such file or directory: '([^']+)'|\b[Cc]annot find file:? '?([^\s']+)'?")
# The exception types such a message comes with.
NO_SUCH_FILE_TYPES = frozenset({"FileNotFoundError", "OSError", "IOError", "ValueError",
                                "TVMError", "RuntimeError"})


# --------------------------------------------------------------------------------------------
# What reporters write: crash, hang, memory, wrong-result, failure and success words (ranked:
# lower is more specific), TVM's diagnostics, the issue template's headings and boilerplate.

CRASH_PATTERNS: tuple[tuple[int, re.Pattern[str]], ...] = (
    (
        0,
        lazyre.compile(
            r"(?:free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate)\(\): [^\n]+"
            r"|double free or corruption[^\n]*"
            r"|corrupted (?:size vs\. prev_size|double-linked list|top size)[^\n]*"
            r"|stack smashing detected"
            r"|terminate called after throwing an instance of[^\n]*"
            r"|libc\+\+abi(?:\.dylib)?: terminating(?: due to uncaught exception)?[^\n]*"
            r"|AddressSanitizer: [\w-]+[^\n]*"
        ),
    ),
    (
        1,
        lazyre.compile(
            r"Fatal Python error: (?:Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction)"
        ),
    ),
    (
        2,
        lazyre.compile(
            r"Segmentation fault(?: \(core dumped\))?|Aborted \(core dumped\)"
            r"|Illegal instruction(?: \(core dumped\))?|Bus error(?: \(core dumped\))?"
            r"|Floating point exception(?: \(core dumped\))?|Trace/breakpoint trap(?: \(core dumped\))?"
            r"|\bSIG(?:SEGV|ABRT|BUS|FPE|ILL|TRAP)\b"
            r"|Segfault encountered|^\s*Aborted\s*$"
        ),
    ),
    (
        3,
        lazyre.compile(
            r"(?:\b(?:exit(?:ed)?|exits|return(?:ed)?|status|code|LASTEXITCODE|returncode|rc|signal)"
            r"|\$\?)"
            # 128+N: 139 SEGV, 134 ABRT, 136 FPE, 135 BUS, 132 ILL, 133 TRAP (a whole number:
            # not the "-4" of "PyTorch beyond 1e-4")
            r"[\w ]{0,20}?[:=]?\s*(?<![\w.])(?:-11|139|134|-6|-4|132|-8|136|-7|135|-5|133"
            r"|-1073740940|-1073741819|-1073741571"
            r"|-1073740791|3221226356|3221225477)\b"
            r"|\b0x[cC]00003(?:74|0[0-9])\b|\b0x[cC]0000005\b|\b0x[cC]00000[fF][dD]\b|\b0x[cC]0000409\b"
            r"|heap corruption|access violation|interrupted by signal (?:11|6|7|8|4)\b",
            re.IGNORECASE,
        ),
    ),
    (
        4,
        lazyre.compile(
            r"\bseg[ -]?fault(?:s|ed|ing)?\b|\bcore[ -]?dump(?:s|ed)?\b"
            # the process gone with no Python error: "python quits without any message", "the
            # process just dies", "the kernel appears to have died" (Jupyter)
            # (not "exits without error": that is a normal end)
            r"|\b(?:quits|quit|dies|died|terminates|terminated|closes|closed)\s+"
            r"(?:silently|quietly)\b"
            r"|\b(?:quits|quit|exits|exited|dies|died|terminates|terminated|closes|closed)\s+"
            r"without (?:any |a |an )?(?:message|traceback|stack ?trace|word)\b"
            r"|\bkernel (?:appears to have |has |just |keeps )?(?:died|dying|dies|crash\w*)\b"
            r"|\b(?:process|python|interpreter|program)\s+(?:just |simply |silently )?(?:dies|died)\b"
            r"|\b(?:it|vm|app)\s+(?:just|simply|silently)\s+(?:dies|died)\b"
            r"|\b(?:python |the )?process (?:is|was) (?:just |simply )?gone\b",
            re.IGNORECASE,
        ),
    ),
)
# "crashes" alone is loose talk for any failure as often as not: weaker than an error line.
LOOSE_CRASH_RE = lazyre.compile(r"\bcrash(?:es|ed|ing)?\b|\babort(?:s|ed|ing)?\b", re.IGNORECASE)
HANG_RE = lazyre.compile(
    # ("stuck" but not a value: "the fp16 sum gets stuck at 4096", "stuck once it reaches")
    # (not "dead kernels hanging around in the module")
    r"\b(?:hangs?|hanging)\b(?!\s+(?:around|about|off|out)\b)|\bhung\b|\binfinite loop\b"
    r"|\bstuck\b(?!\s+(?:at|around|near|on)\s+[-+~]?\d)(?!\s+(?:once|when|after|as soon as) "
    r"(?:it|they|the \w+) (?:reach|hit)\w*)|\bdeadlock(?:s|ed)?\b"
    r"|\bnever (?:finish|end|terminate|return|complete|stop|halt)(?:e?s|e?d)?\b|\btime[sd] out\b"
    r"|\bfreezes\b|\b(?:runs?|running|goes on|going on|compiles?|compiling|continues?) "
    r"(?:forever|indefinitely|endlessly)\b|\btak(?:es?|ing) (?:forever|an eternity)\b"
    # runaway compilation: "continuous compilation", "compiles continuously", "endless compile"
    r"|\b(?:continuous(?:ly)?|endless(?:ly)?|infinite(?:ly)?|never-ending) compil\w*"
    r"|\bcompil\w* (?:continuously|endlessly|without end)\b"
    # the same in Chinese: "卡死" / "卡住" (stuck), "死循环" (infinite loop), "不返回" (never
    # returns), "无响应" (not responding), "一直运行" (keeps running)
    r"|卡死|卡住|死循环|不返回|无响应|一直运行",
    re.IGNORECASE,
)
# A word for how a run ends ("crashes", "passes", "Segmentation fault"), for INTERMITTENT_RE.
_OUTCOME_WORD = (r"(?:crash|segfault|segmentation|fail|hang|abort|pass|work|succeed|error|exception"
                 r"|die|died|dies|finish|complete|reproduc|happen|\w*Error\b)")
# A failure that comes only in some runs ("segfaults randomly", "flaky", "about half the runs",
# "3 out of 10 runs", "not every time"): the report is run more than once while it passes.
INTERMITTENT_RE = lazyre.compile(
    r"\b(?:randomly|at random|intermittent(?:ly)?|flaky|flakily|sporadic(?:ally)?|occasionally"
    r"|non-?deterministic(?:ally)?|from time to time|now and then|every (?:other|few) runs?"
    r"|not (?:every time|each time|on every run|deterministic(?:ally)?)"
    r"|only (?:some|sometimes|occasionally)\b"
    # ("sometimes" / "not always" of the outcome, not of the input: "the rank is sometimes 0")
    r"|(?:sometimes|not always)\b(?=[^\w.;:\n]+(?:\w+[^\w.;:\n]+){0,3}?" + _OUTCOME_WORD + ")"
    r"|(?:half|a third|a quarter|\d{1,2}\s?%)(?: of)? (?:the |my |all )?"
    r"(?:runs|times|time|attempts|executions)\b"
    r"|\d{1,3} (?:out )?of (?:every )?\d{1,3} (?:runs|times|attempts|executions|tries)"
    r"|(?:one|1) (?:time )?in (?:\d{1,3}|two|three|four|five|ten) (?:runs|times|attempts|tries))"
    # the same in Chinese: "偶尔" (occasionally), "有时" (sometimes), "随机" (random), "时好时坏"
    r"|偶尔|偶现|有时|随机|时好时坏",
    re.IGNORECASE,
)
# The reporter says the printed values change from one run to the next (memory read before it
# was written): a second run that prints other values shows it.
VARYING_OUTPUT_RE = lazyre.compile(
    r"\b(?:changes?|changing|differs?|different|varies|vary)\b[^.\n]{0,30}\b(?:from|between|on|with|in)"
    r" (?:each |every )?(?:run|runs|execution|time) (?:to|and) (?:run|runs|execution|the next)\b"
    r"|\b(?:each|every) (?:time|run)\b[^.\n]{0,30}\b(?:different|changes?|another|new) "
    r"(?:numbers?|values?|results?|outputs?|garbage|one)\b"
    r"|\bdifferent (?:numbers?|values?|results?|outputs?|garbage)\b[^.\n]{0,20}\b(?:each|every|on each|on every) "
    r"(?:time|run)\b"
    r"|\b(?:garbage|random|uninitiali[sz]ed|junk)\b[^.\n]{0,20}\b(?:numbers?|values?|memory|data|outputs?"
    r"|floats?)\b"
    # "(3.8e-33 on my box, changes every run)"
    r"|\b(?:changes?|changing|differs?|varies)\s+(?:on\s+|with\s+)?(?:each|every)\s+(?:run|time|execution|call)\b"
    # "(the second value changes between runs)", "differs across executions"
    r"|\b(?:changes?|changing|differs?|varies|different)\s+(?:between|across)\s+(?:runs|executions|calls)\b",
    re.IGNORECASE,
)
# TVM's warning when it compiles take/gather in "fast" mode: indices are not checked, and an
# out-of-range one reads memory past the end.
UNCHECKED_INDEX_WARNING = "Fast mode segfaults when there are out-of-bounds indices"
# The reporter says an index was out of range: "index 10 is out of range for size 4", "an
# index past the end", "an index outside the axis".
OUT_OF_RANGE_INDEX_RE = lazyre.compile(
    r"\bout[- ]of[- ](?:range|bounds?)\b|\bpast the end\b|\bbeyond the (?:end|size|bounds?)\b"
    r"|\boutside (?:the )?(?:axis|range|bounds?|tensor|array)\b|\binvalid ind(?:ex|ices)\b"
    r"|\bind(?:ex|ices) (?:too (?:big|large)|larger than|bigger than|>=?)\b", re.IGNORECASE)
# A float32 subnormal as numpy prints it (below 1.18e-38: e-39 .. e-45): the fingerprint of
# uninitialized memory read as float32 (no real computation in a repro prints one).
SUBNORMAL_RE = lazyre.compile(r"(?<![\w.])[-+]?\d(?:\.\d+)?e-(?:39|4[0-5])(?![\d.])")
# A pasted traceback that ends in KeyboardInterrupt: the reporter stopped a run that went on.
INTERRUPTED_RE = lazyre.compile(r"^\s*(?:\^C)?\s*KeyboardInterrupt\s*$")
# Runaway memory, with no word about time: the run would hit the worker's memory limit.
MEMORY_RE = lazyre.compile(
    r"\bmemory (?:usage |use |consumption |footprint )?(?:keeps?|kept|continues|continued|is|was)?"
    r" ?(?:slowly |steadily |constantly |rapidly |quickly )?(?:increas|grow|ris|climb|explod)\w*"
    r"|\b(?:increasing|growing|unbounded|exploding|excessive|huge) memory\b"
    r"|\b(?:runs?|running|ran|goes|went) out of (?:memory|RAM)\b|\bOOM(?:-killed)?\b"
    r"|\bout-of-memory\b|\bmemory (?:leak|explosion|blow-?up)s?\b",
    re.IGNORECASE,
)
# "the machine crashed" (under a runaway compile) is not the process crashing.
MACHINE_CRASH_RE = lazyre.compile(
    r"\b(?:machine|system|computer|kernel|pc|laptop|server|host|os)(?:'s)? "
    r"(?:(?:has|had|would|will|eventually|finally) )?(?:crash|abort)\w*\b",
    re.IGNORECASE,
)
NEGATION_RE = lazyre.compile(
    # (within its clause: "no error, but the output is all zeros" negates only the error)
    # ("it does not complain, it just segfaults": "just" turns the clause as "but" does; so does a
    # comma that starts a new clause: "No exception, the result is silently truncated")
    r"\b(?:not|no|never|nothing|without|instead of|n't|nor|avoid|prevent)\b"
    r"(?:(?!\b(?:but|just)\b|,\s*(?:the|it|this|that|they|i|we|tvm|its|so|and (?:the|it))\b)[^.;:]){0,30}$"
    # the same in Chinese: "没有报错, 也没有 segfault" (no error, and no segfault either)
    r"|(?:没有|没|不是|并非|不会)(?:(?!但)[^。；：.;:,，]){0,12}$",
    re.IGNORECASE
)

CHECK_FAILED_RE = lazyre.compile(r"Check failed:?\s*[^\n`]*")
INTERNAL_RE = lazyre.compile(r"\b(?:tvm\.error\.)?InternalError\b(?::\s*[^\n`]*)?")
MISMATCHED_RES = (
    lazyre.compile(r"Mismatched elements: [^\n]*"),
    lazyre.compile(
        r"Not equal to tolerance[^\n]*|Arrays are not (?:almost )?equal|Tensor-likes are not close"
    ),
)
# A keyword argument the called function does not take (renamed in TVM: bot.api_changes).
UNEXPECTED_KEYWORD_RE = lazyre.compile(r"\b(\w+)\(\) got an unexpected keyword argument '(\w+)'")
PY2_MODULE_ATTR_RE = lazyre.compile(r"'module' object has no attribute '([^']+)'")

# What a TVM result is checked against.
_REFERENCE = r"(?:numpy|np|onnx ?runtime|ort|pytorch|torch|tensorflow|tf|keras|jax|the reference)\b"
# Within one sentence (a decimal point is no end), up to the first "but" (linear on any text).
_CLAUSE = r"(?:(?!\bbut\b)(?:[^.;]|\.(?=\d))){0,50}"
REPORTED_WRONG_RE = lazyre.compile(
    # "type/shape/signature mismatch" is a compiler check, not a wrong number.
    r"(?<!type )(?<!dtype )(?<!shape )(?<!signature )(?<!argument )(?<!structural )"
    r"(?<!struct info )(?<!layout )(?<!arity )(?<!version )(?<!abi )"
    r"\bmismatch(?:ed|es)?\b(?! (?:types?|shapes?|dtypes?|signatures?|arguments?)\b)"
    # (TVM's argument check: "Mismatched A.dtype on argument #0")
    r"(?! \w+\.(?:dtype|shape|ndim|device|strides|byte_offset)\b)"
    r"|\bincorrect(?:ly)?\b|\bnot correct(?:ly)?\b"
    # accuracy / precision words ("nn.dense accuracy error", "seems not so accurate")
    r"|\binaccura(?:te|cy)\b|\baccuracy\b|\bnot (?:\w+ ){0,2}(?:accurate|precise)\b"
    r"|\bprecision\b(?= (?:errors?|drops?|loss))"
    r"|\bnumerical(?:ly)? (?:differen(?:ce|t)|error|issue|problem)s?\b"
    r"|\b(?:results?|outputs?|values?) (?:differ|are different|is different)\b"
    r"|\b(?:differs?|different|inconsistent) (?:from|with|than) (?:the )?(?:numpy|onnx ?runtime|ort|pytorch|torch|tensorflow|tf|keras|reference|expected)\b"
    r"|\b(?:onnx ?runtime|ort|numpy|pytorch|torch)(?:'s)? (?:outputs?|results?)\b[^.]{0,30}\bdiffer"
    r"|\bwrong(?:ly)? (?:results?|outputs?|answers?|values?|IRs?|code|shapes?|index|indices|dtypes?|types?|numbers?)\b"
    r"|\b(?:is|are|was|were|seems?|looks?|goes|went|gives?|gave|produces?|produced|returns?|returned|gets?|got|outputs?|emits?|generates?|generated|comes?|came)\s+(?:(?!not\b|never\b)\w+\s+)?wrong(?:ly)?\b(?! as such\b)"
    # "the output shape is (1, 3) but should be (3,)"
    r"|\b(?:is|are|was|were|gives?|gave|returns?|returned|prints?|printed)\b(?:`[^`\n]{1,80}`|[^.]|\.(?=\d))"
    r"{1,60}\bbut (?:it )?should (?:be|have|give|return|print)\b"
    # "should give x[5::-2] = [5,3,1] but I get an empty array"
    r"|\bshould (?:be|give|return|print|output)\b[^.\n]{1,80}\bbut (?:i|we) (?:get|got|see|saw)\b"
    # "I get [[17 23] [39 53]] instead of [[19 22] [43 50]]" (values, not "an error instead of")
    r"|\b(?:i|we) (?:get|got|see|saw)\s+`?[\[(\-\d][^\n]{0,80}?\binstead of\b"
    # "a quite large error from relax.op.sum compared to a float64 reference" (a numeric error)
    r"|\b(?:large|big|huge|significant|numerical|numeric|rounding|accumulated|relative|absolute)"
    r" (?:numerical )?errors?\b(?! (?:message|is raised|was raised))"
    r"|\bm[ue]ssy\b"
    r"|(?:not|cannot|can't|isn't|aren't|fails? to)\b[^.]{0,60}\bcorrectly\b"
    r"|\binconsisten(?:t|cy)\b|\bdisagree(?:s|d)? with\b|\b(?:and|vs\.?|versus) [^.\n]{1,60}\bdisagree\b|\bnot (?:the )?(?:equal|same)\b|\bdiffer(?:s|ent|ence)?\b[^.]{0,20}\b(?:result|output|value)s?"
    r"|\b(?:result|output|value)s?\b[^.]{0,30}\bdiffer"
    # "gives random number, different every run", "trash values"
    r"|\b(?:random|arbitrary|trash|junk|uninitiali[sz]ed) (?:big |large |huge |tiny )?"
    r"(?:numbers?|values?|results?|outputs?|data|indices|index|floats?|ints?|integers?)\b"
    r"|\bdiverge[sd]?\b|\bgarbage\b|\b(?:returns?|returned|gives?|gave|gets?|got) junk\b|\buninitiali[sz]ed (?:memory|values?|data)\b|\bgarbled\b"
    r"|\bunexpected (?:result|output|value)s?\b|\bprecision (?:loss|issue|problem)\b"
    # (a decimal point is no sentence end: "should be 2.5 but it returns 2")
    r"|\bexpected\b(?:[^.]|\.(?=\d)){0,60}\bbut (?:got|get|is|was)\b"
    r"|\bshould (?:be|return)\b(?:[^.]|\.(?=\d)){0,60}\bbut\b"
    r"|\bnon-?deterministic\b|\bNaNs?\b"
    # "R.sum on float16 returns inf", "the sum overflows to -inf"
    r"|\b(?:returns?|returned|gives?|gave|produces?|produced|outputs?|prints?|printed|yields?|"
    r"becomes?|became|overflows? to|overflowed to) [-+]?(?:inf|infinity|infs)\b"
    # "pool_size > input gives tensor with negative shape"
    r"|\b(?:gives?|gave|returns?|returned|produces?|produced|outputs?|creates?|created) (?:an? )?"
    r"(?:runtime )?(?:tensors?|arrays?|outputs?|results?) (?:with|of) (?:an? )?(?:negative|wrong|bad|"
    r"invalid|incorrect|garbage|zero-size|empty) (?:shapes?|dtypes?|sizes?|dims?|dimensions?)\b"
    # "strided_slice with negative stride returns an empty array `[]`"
    r"|\b(?:returns?|returned|gives?|gave|produces?|produced|outputs?) (?:an? |the )?empty "
    r"(?:tensors?|arrays?|outputs?|results?|lists?)\b(?! instead of (?:an? )?(?:error|exception))"
    # "TVM silently inserts a cast and the output becomes float32", "a silent dtype change"
    r"|\bsilently (?:inserts?|changes?|converts?|casts?|promotes?|upcasts?|downcasts?|truncates?|"
    r"drops?|rounds?|reorders?)\b|\bsilent (?:dtype|type|shape) (?:change|conversion|promotion)\b"
    # "relu after add gives negative numbers??"
    r"|\b(?:gives?|gave|returns?|returned|produces?|produced|outputs?) (?:some |a few )?negative "
    r"(?:numbers|values|outputs|results|entries|elements)\b"
    # "the result wraps around" (an integer overflow the reporter did not expect)
    r"|\b(?:wraps?|wrapped|wrapping) around\b"
    # "so `exclusive=True` is just ignored?", "the padding argument is silently ignored"
    r"|(?:`[^`\n]{1,40}`|\b(?:attribute|argument|arg|option|flag|parameter|param|kwarg|"
    r"setting)s?)\s+(?:is|are|was|were|gets?|got|seems? to be|being)\s+(?:just |simply |"
    r"silently |completely |totally |always )?ignored\b"
    # "the exclusive cumsum seems shifted by one", "an off-by-one in the last window"
    r"|\boff[- ]by[- ]one\b|\bshifted by (?:one|1)\b"
    # a pass that does not do its job: "CommonSubexprElim doesn't do anything on this function",
    # "(A[i] + n) is computed three times in the output", "the cast is not folded"
    r"|\b(?:does ?n[o']t|did ?n[o']t) (?:do|change) anything\b|\bdoes nothing\b|\bhas no effect\b"
    # "FoldConstant pass do nothing on my module", "the R.add of the two constants is still there"
    r"|\b(?:pass|transform|it) do nothing\b|\b(?:is|are) still (?:there|present)\b"
    # "StmtSimplify does not merge if/else with identical branches"
    r"|\b(?:does ?n[o']t|did ?n[o']t|do ?n[o']t|fails? to) (?:merge|fold|simplify|eliminate|remove|fuse|"
    r"hoist|inline|vectori[sz]e|unroll|combine|deduplicate|propagate)\b"
    r"|\bleaves? [^.\n]{0,40}\buntouched\b"
    r"|\b(?:is|are) (?:computed|evaluated|loaded|recomputed) (?:twice|three times|\d+ times|multiple times)\b"
    r"|\b(?:is|are|was|were) (?:not|never) (?:eliminated|removed|folded|fused|hoisted|optimi[sz]ed"
    r"|inlined|vectori[sz]ed|unrolled)\b"
    # "gives smaller values on the border than PyTorch"
    r"|\b(?:smaller|larger|bigger|higher|lower|different) (?:values?|numbers?|results?|outputs?)"
    r"(?: \w+){0,4} than (?:in |with )?(?:numpy|np|torch|pytorch|onnx ?runtime|ort|tensorflow|tf|jax"
    r"|scipy|the reference|reference|expected)\b"
    # "TVM gives 4 but numpy gives 3", "it returns `[0 1]` whereas torch returns `[1 1]`"
    r"|\b(?:gives?|gave|returns?|returned|prints?|printed|outputs?|produces?|produced|got)\s+"
    # (also "gives -112, numpy says 400")
    r"[^\n]{1,40}?(?:\s(?:but|while|whereas)|[,;])\s+(?:numpy|np|torch|pytorch|onnx ?runtime|ort|tensorflow"
    r"|tf|jax|scipy|the reference|reference)\s+(?:gives?|gave|returns?|returned|prints?|printed"
    r"|outputs?|produces?|produced|says?|has|got)\b"
    # "the output is all zeros", "returns all-zero tensors", "the result is all NaN"
    r"|\b(?:outputs?|results?|values?|tensors?|arrays?)\s+(?:is|are|was|were|come back|comes back)\s+"
    r"(?:all|only|just)\s+(?:zeros?|0s?|nans?|infs?)\b"
    r"|\b(?:returns?|returned|gives?|gave|outputs?|produces?|produced)\s+(?:all|only)[- ]"
    r"(?:zeros?|0s?|nans?)\b|\ball[- ]zeros? (?:outputs?|results?|tensors?|arrays?)\b"
    # "It prints 32. The sum should be 20000", "returns the input unchanged"
    r"|\b(?:prints?|printed|gives?|gave|returns?|returned|outputs?|got|shows?)\s+`?-?\d[^\n]{0,80}?"
    r"\bshould (?:be|give|return|print|equal)\s+`?-?\d"
    # "Is it expected that the second value prints -3.4028235e+38 and not -inf?"
    r"|\b(?:prints?|printed|gives?|gave|returns?|returned|outputs?)\s+`?-?\d[\w.+-]{0,30}`?\s+"
    r"(?:and not|instead of|rather than)\s+`?(?:-?inf|nan|-?\d)"
    r"|\b(?:returns?|returned|gives?|gave|outputs?|leaves?|left)\s+(?:the\s+)?(?:input|tensor|"
    r"array|values?|data)\s+(?:unchanged|untouched|as[- ]is)\b"
    # "running result error", "inference results are not right", "out_tvm ≠ out_ref"
    r"|\b(?:running|inference|execution|computed?|calculation) results? (?:errors?|wrong|is wrong)\b"
    r"|\bresults? (?:is|are) not (?:right|correct)\b|\w\s*≠\s*\w"
    # "well_formed says False after copying main" (a check's answer, not "should return True")
    r"|\b(?:returns|returned|says|said|gives|gave|prints|printed|reports|reported)\s+`?"
    r"(?:False|True)\b`?(?!\s+(?:as expected|correctly|like it should)\b)"
    # "sqrt of int32 truncates silently", "silently wraps around", "I get truncated integers"
    r"|\bsilently (?:truncat|round|overflow|wrap|clamp|saturat|drop|discard|los|corrupt|zero)\w*"
    r"|\b(?:truncat|overflow|wrap)\w*\s+(?:\w+\s+)?silently\b"
    r"|\b(?:get|got|gives?|gave|returns?|returned)\s+(?:\w+\s+)?(?:truncated|wrapped|overflowed)\b"
    # the simplifier leaves what it should fold: "floordiv(x + 1, 2) * 2 is not simplified"
    r"|\b(?:is|are|was|were|isn't|aren't|wasn't|weren't)\s+(?:not\s+|never\s+)?"
    r"(?:simplified|folded|canonicali[sz]ed)\b(?<!\bis simplified)(?<!\bare simplified)"
    r"(?<!\bwas simplified)(?<!\bwere simplified)"
    r"|\b(?:fails?|failed) to (?:simplify|fold|canonicali[sz]e)\b"
    r"|\b(?:does not|doesn't|did not|didn't|cannot|can't) (?:get )?(?:simplif(?:y|ied)|fold)\b"
    # "the mean is way off", "off by 3 million", "max abs diff 0.5 vs numpy"
    r"|\b(?:way|completely|totally|wildly|badly) off\b|\boff by (?:about |~)?\d"
    # "the sum gets stuck at 16777216" (a value that stops growing)
    r"|\b(?:gets?|got|is|stays?) stuck at [-+~]?\d"
    # "numpy gets the right answer" (and TVM does not)
    r"|\b(?:numpy|np|torch|pytorch|onnx ?runtime|ort|reference) (?:gets?|gives?|returns?|computes?)"
    r" the (?:right|correct|expected) (?:answer|result|values?|output)\b"
    # the same in Chinese: "结果不对" (the result is wrong), "对不上" (does not match), "不一致"
    r"|结果不对|结果错|结果有误|错误的结果|结果不一样|结果不同|对不上|不一致|算错"
    r"|\bmax(?:imum)?\.? abs(?:olute)?\.? (?:diff|difference|error|err)\b(?:[^.\n]|\.(?=\d)){0,40}"
    r"\b(?:vs\.?|versus|against|compared (?:to|with)|from)\s+(?:the )?(?:numpy|np|torch|pytorch|"
    r"onnx ?runtime|ort|reference|expected)\b",
    re.IGNORECASE,
)
# "the first value is exactly 0.0 in TVM but 2e-9 in numpy" (and the other way round): the same
# reported wrong result, kept apart from REPORTED_WRONG_RE (tried only on lines with a "but").
TVM_VS_REFERENCE_RE = lazyre.compile(
    r"\b(?:in|with|from) TVM\b" + _CLAUSE + r"\bbut\b" + _CLAUSE + r"\b(?:in|with|from) " + _REFERENCE +
    r"|\b(?:in|with|from) " + _REFERENCE + _CLAUSE + r"\bbut\b" + _CLAUSE + r"\b(?:in|with|from) TVM\b",
    re.IGNORECASE,
)
# A value quoted in inline code as what TVM gave ("TVM gives `[0. nan 2.]` but numpy gives
# `[nan nan 2.]`", "TVM: `[0.0, 0.0, 0.0, -1.0]`", "it returns `-112`"): the words just before the
# span say whose value it is, the nearest side named winning. The span holds only numbers, nan,
# inf, booleans and array punctuation.
VALUE_SPAN_RE = lazyre.compile(r"`(?P<val>[^`\n]{1,300})`")
VALUE_TEXT_RE = lazyre.compile(r"(?:[\[\](),\s\d.eE+\-]|\bnan\b|\binf\b|\bTrue\b|\bFalse\b)+")
VALUE_ATOM_RE = lazyre.compile(r"\d|\bnan\b|\binf\b|\bTrue\b|\bFalse\b")
VALUE_TVM_SIDE_RE = lazyre.compile(
    r"\b(?:tvm|relax|tir|tirx|compiled|the vm|our build|(?:it|this)\s+(?:gives|returns|outputs|"
    r"prints|produces|yields)|i (?:get|got|see)|we (?:get|got|see)|actual(?:ly)?|(?:result|output) "
    r"(?:is|was))\b"
    # the script's own output, its subject left out: "Prints `True`. Expected: False"
    r"|^\W*(?:prints|printed|returns|returned|outputs|gives|gave|shows)\b", re.IGNORECASE,
)
# A value told bare, TVM's then the reference's: "gives -112, numpy says 400", "it returns 7 but
# numpy returns 6" (a script that prints both prints them in that order).
_BARE_VALUE = r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"
VALUE_BARE_PAIR_RE = lazyre.compile(
    r"^\W{0,3}(?:(?:it|this|tvm|relax|the vm)\s+)?(?:gives|gave|returns|returned|prints|printed|"
    rf"outputs)\s+(?P<tvm>{_BARE_VALUE})(?:\s*[,;]|\s+(?:but|while|whereas))\s+" + _REFERENCE
    + rf"\s+(?:says|gives|gave|returns|returned|prints|printed|outputs|has)\s+(?P<ref>{_BARE_VALUE})\b",
    re.IGNORECASE,
)
# "the second value prints -3.4028235e+38 and not -inf": the value printed, then the one meant.
VALUE_NOT_RE = lazyre.compile(
    rf"\b(?:prints?|printed|gives?|gave|returns?|returned|outputs?)\s+`?(?P<tvm>{_BARE_VALUE})`?\s+"
    r"(?:and not|instead of|rather than)\s+`?(?:-?inf|nan|-?\d)", re.IGNORECASE)
VALUE_REFERENCE_SIDE_RE = lazyre.compile(
    _REFERENCE + r"|\b(?:expected|expect|should|correct|right answer|instead of|rather than|"
    r"reference|ground truth)\b", re.IGNORECASE,
)
# An error the reference raises, not TVM ("numpy would raise `ValueError: ...`", "torch gives
# RuntimeError: ..."): what the reporter expected TVM to do, read in the words just before it.
REFERENCE_RAISES_RE = lazyre.compile(
    # ("PyTorch `nn.Embedding` raises `IndexError: ...`": a dotted name, in backticks)
    r"\b" + _REFERENCE + r"(?:[^.;]|\.(?=\w)){0,40}?\b(?:raises?|raised|throws?|threw|gives?|reports?|rejects?|"
    r"errors? out with)\b[^.;`]{0,15}[`'\"*\s]*$", re.IGNORECASE,
)
# An error the wrong output leads to afterwards, by a call the reporter made on it ("`.numpy()`
# on it then fails with `ValueError: negative dimensions are not allowed`"): the aftermath,
# not what TVM did. Read in the words just before the message.
AFTERMATH_RE = lazyre.compile(
    # (a method called on the result, "`.numpy()`", not a function such as `tvm.compile(mod)`)
    r"(?:`\.\w+\([^`\n]{0,30}\)`|\b(?:reading|printing|converting)\b[^.\n]{0,30})"
    r"\s+(?:on|of|with) (?:it|that|this|them|the (?:result|output|tensor|array))\b[^.\n]{0,20}?"
    r"\b(?:fails?|raises?|throws?|errors?(?: out)?|crashes)\b[^.\n]{0,25}$", re.IGNORECASE,
)
# The output holds what it should not: "this line should not be there", "an unnecessary
# `T.where` predicate", "redundant casts" (read as a wrong result where the report shows the
# output it means).
SHOULD_NOT_HOLD_RE = lazyre.compile(
    r"\bshould(?:n't| not) (?:be (?:there|here|present|generated|emitted|printed|added|inserted)\b"
    r"|appear\b|exist\b)"
    r"|\b(?:unnecessary|redundant|spurious|superfluous|useless|unneeded) (?:`[^`\n]{1,60}`|T\.\w+|"
    r"predicates?|casts?|copies|copy|loops?|lines?|checks?|allocations?|statements?|"
    r"instructions?|blocks?|branch(?:es)?|conditions?)",
    re.IGNORECASE,
)
GENERIC_FAIL_RE = lazyre.compile(
    r"\bfail(?:s|ed|ure|ing)?\b|\berrors?\b|\bexceptions?\b|\bthrows?\b|\braises?\b"
    r"|\bcannot (?:be )?(?:compile|build|parse|run|import|load)d?\b|\bbroken\b",
    re.IGNORECASE,
)
PASSED_RE = lazyre.compile(
    r"\b(?:works?|worked|working|runs?|ran) (?:fine|well|correctly|as expected|properly|ok)\b"
    r"|\bno (?:errors?|exceptions?|problems?|crash(?:es)?)\b|\bwithout (?:any )?(?:errors?|problems?)\b"
    r"|\bsucceed(?:s|ed)?\b|\bsuccessfully\b"
    # "the test passes (now)", not "the VM passes the input straight through"
    r"|\bpasses\b(?=\s*(?:[.,;:!)]|$|(?:now|fine|ok|again|without|with no|for me|here|on)\b))"
    # "The result is correct (matches np.add.at), but compiling prints a warning"
    r"|\b(?:the )?(?:results?|outputs?|values?|numbers?|answers?) (?:is|are|looks?|seems?) "
    r"(?:(?:all |still )?(?:correct|right))\b"
    # "That's all it prints" (above: a warning), "only a warning", "just warnings"
    r"|\bthat'?s all it (?:prints|shows|outputs|says)\b"
    r"|\b(?:only|just) (?:(?:prints?|shows?|gives?|emits?|logs?) )?(?:a |the |this |some )?warnings?\b"
    # "It is not wrong as such, but the regions are loose" (a complaint about quality)
    r"|\bnot (?:wrong|incorrect|a bug) (?:as such|per se)\b"
    # "Not a crash, just something that looks wasteful in the IR"
    r"|\bnot an? (?:crash|error|failure)\b(?![,;:]?\s+(?:but|and|though|although|however)\b)",
    re.IGNORECASE,
)
# The complaint that TVM takes what it should refuse: the reporter saw it run to the end. A run
# where TVM now refuses it with its own error is the fix the report asks for.
ACCEPTED_RE = lazyre.compile(
    # "TVM silently accepts it", "accepts the invalid axis without an error"
    r"\bsilently accept(?:s|ed)?\b|\baccept(?:s|ed)? [^.;]{0,60}\bwithout (?:an? |any )?(?:error|complaint|warning)"
    # "builds it without complaint", "compiles with no warning at all"
    r"|\b(?:compiles?|compiled|builds?|built|lowers?|lowered|runs?|ran|goes through) [^.;]{0,40}"
    r"\b(?:without (?:an? |any )?(?:complaint|warning|diagnostic|check)s?|with no (?:complaint|warning|error|diagnostic)s?)\b"
    # "Shouldn't TVM reject this?", "should it not raise here?"
    r"|\bshould(?:n'?t| not) (?:tvm|it|this|that|the \w+(?: \w+)?) (?:reject|refuse|raise|throw|complain|error|warn|fail)\b"
    r"|\bshould (?:tvm|it|this|that) not (?:reject|refuse|raise|throw|complain|error|warn|fail)\b"
    # "no error is raised", "it does not complain", "doesn't raise anything"
    r"|\bno (?:error|exception|diagnostic|warning) (?:is|was|gets?) (?:raised|thrown|reported|emitted|given)\b"
    r"|\b(?:does ?n[o']t|did ?n[o']t|never) (?:raise|throw|complain|reject|refuse|warn)\b"
    # "silently binds the shape var to a negative value", "happily accepts", "nobody complains"
    r"|\bsilently (?:binds?|rewrites?|allows?|compiles?|builds?|takes?)\b"
    r"|\bhappily (?:accepts?|rewrites?|compiles?|builds?|takes?)\b"
    r"|\b(?:nobody|nothing|no one) (?:complains|complained|checks|checked|rejects|rejected)\b"
    # "relax matmul accept incompatible shapes", "Relax matmul not check the reduction dim"
    r"|\baccept(?:s|ed)? (?:the |an? )?(?:incompatible|invalid|mismatched|wrong|bad|illegal|"
    r"out[- ]of[- ]range|inconsistent) (?:shapes?|inputs?|axis|axes|dims?|dimensions?|sizes?|"
    r"values?|arguments?|dtypes?)\b"
    r"|\b(?:not|never|does ?n[o']t|did ?n[o']t) checks? (?:the |any |its )?(?:reduction|shapes?|"
    r"sizes?|dims?|dimensions?|axis|axes|bounds?|range|dtypes?|inputs?)\b",
    re.IGNORECASE,
)
# How the reporter came to the bug, not what the script does: "We originally saw random crashes
# later in the model and tracked it down to this reshape".
BACKSTORY_RE = lazyre.compile(
    r"\b(?:originally|initially|at first|first) (?:saw|noticed|hit|got|observed|had|thought)\b"
    r"|\btrack(?:ed)? (?:it|this|that|them|the \w+) down\b|\bnarrowed (?:it|this) down\b"
    # "The empty tensor then crashed my downstream concat kernel (different story)"
    r"|\b(?:different|separate|another|other) (?:story|issue|topic)\b|\bdownstream\b"
    # "Output shape is `(0,)` and then a later op segfaults", "then my model fails later"
    # (the later thing is what fails: not "prints `Floating point exception` and the next step of
    # my pipeline never runs")
    r"|\b(?:later|next|following|subsequent) (?:op|operator|layer|kernel|call)s? (?:\w+ ){0,3}"
    r"(?:segfaults?|crash(?:es|ed)?|fails?|failed|dies|died|aborts?|errors? out)\b"
    r"|\bthen (?:my|our|the) (?:whole )?(?:model|pipeline|network|app|service|program) (?:\w+ ){0,2}"
    r"(?:segfaults?|crash(?:es|ed)?|fails?|failed|dies|died|aborts?)\b",
    re.IGNORECASE,
)
QUESTION_TITLE_RE = lazyre.compile(
    r"^\s*(?:\[[^\]]*\]\s*)*(?:why|how|what|when|where|which|is|are|can|could|does|do|should|"
    r"question)\b|\?\s*$",
    re.IGNORECASE,
)
# A section heading: "### Expected behavior", "**Actual behaviour:**".
# Matched against a right-stripped line; group 1 still carries closing "#"s (strip them): a lazy
# ``(.+?)\s*#*\s*$`` backtracked quadratically over trailing spaces.
SECTION_RE = lazyre.compile(r"^\s{0,3}(?:#{1,6}\s*(.+)$|\*\*([^*]{1,60})\*\*:?$)")
# TVM's own diagnostics, recognisable without an ``XxxError:`` line.
# The words that make a TVM log line (``[hh:mm:ss] src/x.cc:12: ...``) an error, not a note:
# for what the reporter pasted (TVM_DIAG_RES) and for where in TVM it failed (bot.tracebacks).
LOG_ERROR_WORDS = (
    r"Check failed|[Ee]rror|fail(?:s|ed)?|[Cc]annot|[Uu]nable|[Ii]nvalid|not supported"
    r"|[Uu]nsupported|does not match|conflict|is not|are not|not part of|not found|must"
)
TVM_DIAG_RES: tuple[re.Pattern[str], ...] = (
    lazyre.compile(r"\bLLVM ERROR\b(?::[^\n`]*)?", re.IGNORECASE),
    lazyre.compile(
        r"The (?:Relay|Relax) type checker is unable to show the following types match[^\n`]*"
    ),
    lazyre.compile(r"An error occurred during the execution of TVM[^\n`]*"),
    # Messages that read as prose (one is a question), quoted with no "XxxError:" in front,
    # often alone as the title: "Did you forget to bind?" (memory verification of GPU code).
    lazyre.compile(r"\b(?:[Dd]id you forget to bind\?|[Mm]emory verification failed\b)[^\n`\"]*"),
    # A schedule primitive's refusal, pasted without its ScheduleError header
    lazyre.compile(r"^\s*Error message: \S[^\n`]*"),
    lazyre.compile(
        # (the src/ check is a lookahead: "\S*src/\S+\.cc" backtracked over "src/src/src/...")
        r"^\s*\[\d{2}:\d{2}:\d{2}\] (?=\S*(?:src|include)/\S)[^\s:]*\.(?:cc|h|cpp):\d+: "
        r"(?!(?:Warning|warning|Info|info|Note|note)\b)"
        rf"(?=[^\n]*\b(?:{LOG_ERROR_WORDS})).*"
    ),
)
BACKTRACE_NOTE_RE = lazyre.compile(r"note: run with `?TVM_BACKTRACE=1`?")
# A sentence about another time or setup ("Previously it worked", "with version 0.18 it runs
# fine"): its pass-words say nothing about the report.
ELSEWHEN_RE = lazyre.compile(
    r"\b(?:previously|used to|earlier|before (?:I |we )?(?:upgrad|updat|switch|the )\w*"
    r"|(?:older|previous|earlier|last|old) (?:versions?|releases?|commits?|builds?)"
    r"|with (?:version|v?\d+\.\d+)|(?:in|on) (?:version |v)?\d+\.\d+"
    r"|worked (?:in|on|with|before|until)|until (?:version|v?\d+\.\d+|recently)|if I\b|when I (?:remove|comment|change|replace|use))",
    re.IGNORECASE,
)
# Sentences of the TVM issue template itself (its welcome text and placeholders).
TEMPLATE_PROSE_RE = lazyre.compile(
    r"Thanks for participating in the TVM community|issue tracker is used for actionable items"
    r"|Issues that are inactive for a period|Feel free to reopen|Please refer to the list of label"
    r"|What you were expecting|What actually happened|Any environment details|Preferably a minimal",
    re.IGNORECASE,
)
TEMPLATE_LINE_RE = lazyre.compile(
    r"^\s*(?:what you were expecting|what actually happened|any environment details"
    r"|preferably a minimal script|expected behaviou?r|actual behaviou?r)\b",
    re.IGNORECASE,
)


ACTUAL_LINE_RE = lazyre.compile(
    r"^\s*(?:\*\*)?(?:reality|actual(?:ly)?|in reality|instead|observed|what actually happened"
    r"|actual (?:behaviou?r|result|output))\b",
    re.IGNORECASE,
)


# A title that says the numbers are wrong.
WRONG_TITLE_RE = lazyre.compile(
    r"\b(?:wrong|incorrect|inaccurate|mismatch(?:ed|ing)?|different|inconsistent|bad)"
    r" (?:\w+ ){0,2}(?:results?|outputs?|predictions?|values?|answers?|numbers?|logits|accuracy"
    r"|inference)\b|\b(?:results?|outputs?|predictions?) (?:are |is )?(?:wrong|incorrect|differ\w*)\b",
    re.IGNORECASE,
)
# A script's own result check: numpy's / TVM's / torch's assert helpers, ``assert np.allclose``.
_RESULT_CHECK_RE = lazyre.compile(
    r"assert_allclose|assert_almost_equal|assert_array_almost_equal|assert_array_equal"
    r"|assert_equal|assert_close|^\s*assert\b.{0,200}\b(?:allclose|array_equal|isclose)\b",
)


def ends_in_result_check(script: str) -> bool:
    """The script's last statements (its last five code lines) check its result."""
    code = [
        ln for ln in script.splitlines()[-400:] if ln.strip() and not ln.lstrip().startswith("#")
    ]
    return any(_RESULT_CHECK_RE.search(ln[:1000]) for ln in code[-5:])


# Names that are modules a script forgot to import (``tvm``, ``tir``, ``T``, ``np``): a
# NameError on one is the script's own slip (python-error), not a missing part of the program.
MODULE_ALIASES = frozenset(
    {
        "tvm", "tir", "tirx", "te", "relax", "relay", "topi", "rpc", "autotvm", "auto_scheduler",
        "meta_schedule", "ms", "dlight", "dl", "arith", "ir", "script", "testing", "transform",
        "T", "R", "I", "S", "np", "numpy", "torch", "nn", "F", "onnx", "ort", "onnxruntime",
        "tf", "tensorflow", "keras", "tflite", "mx", "mxnet", "paddle", "jax", "jnp", "scipy",
        "os", "sys", "math", "time", "random", "ctypes", "pytest", "json", "pickle", "copy",
        # the standard library a script forgets to import ("tempfile.mkdtemp()" with no import)
        "re", "tempfile", "shutil", "subprocess", "pathlib", "itertools", "functools",
        "collections", "logging", "argparse", "threading", "multiprocessing", "gc", "glob",
        "struct", "typing", "warnings", "traceback", "textwrap", "timeit", "unittest",
        "contextlib", "dataclasses", "hashlib", "datetime", "platform", "io", "csv", "inspect",
    }
)
# The import line for a module's usual name in TVM's own tests and docs, in the order a file
# has them: code that uses the name but shows no import of it (a test added by a patch) gets it.
USUAL_IMPORTS: tuple[tuple[str, str], ...] = (
    ("np", "import numpy as np"),
    ("pytest", "import pytest"),
    ("tvm", "import tvm"),
    ("te", "from tvm import te"),
    ("tirx", "from tvm import tirx"),
    ("tir", "from tvm import tir"),
    ("sym", "from tvm import sym"),
    ("relax", "from tvm import relax"),
    ("topi", "from tvm import topi"),
    ("s_tir", "from tvm import s_tir"),
    ("dlight", "from tvm import dlight"),
    ("I", "from tvm.script import ir as I"),
    ("R", "from tvm.script import relax as R"),
    ("T", "from tvm.script import tirx as T"),
)
# A report about importing itself ("Failed to import tvm.relax", "import tvm fails"): a script
# that only imports is its whole repro.
# A report about importing, or about loading TVM's shared library (which happens on import).
IMPORT_REPORT_RE = lazyre.compile(
    r"\bimport(?:s|ed|ing)?\b|ImportError|ModuleNotFoundError|No module named"
    r"|undefined symbol|cannot open shared object|Could not find module|\blibtvm\w*"
    r"|\btvm(?:_runtime|_compiler|_ffi)?\.(?:dll|so|dylib)\b|\bload_lib\w*|\bdlopen\b",
    re.IGNORECASE,
)
