"""The text patterns of the extractor, in one place: fence tags, prompts, section words.

Patterns are compiled on first use (:class:`bot.lazyre.Pattern`), so importing the extractor
stays cheap for commands that never read an issue. Every pattern here is linear on any line: no nested
quantifiers over the same characters (``tests/test_extract_hostile.py`` checks each stage on
pathological texts).
"""

from __future__ import annotations

import builtins
import re

from bot.lazyre import Pattern

# The Python prompt (the one definition): ``>>> code``, or ``>>>`` alone; group 2 is the code.
PROMPT = ">>>"
PROMPT_RE = Pattern(r"^(\s*)>>>(?: (.*))?$")
# A line typed into ``$ python``: after a ``$``, ``>>>``, ``...`` or ``In [1]:`` prompt.
SHELL_SESSION_LINE_RE = Pattern(rf"^\s*(?:\$|{PROMPT}|\.\.\.|In \[\d*\]:)\s?(.*)$")
# A continuation line of a prompt session: ``... code``.
CONTINUATION_RE = Pattern(r"^\s*\.\.\.(?: (.*))?$")

# Fence info strings that hold Python (or may: untagged / plain text blocks).
PY_TAGS = frozenset(
    {"python", "py", "python3", "py3", "python2", "ipython", "ipython3", "pycon", "python-repl",
     "pyi", "sage", "jupyter"}
)

PLAIN_TAGS = frozenset({"", "text", "txt", "plain", "plaintext", "none", "code", "raw", "log",
                        "output", "console", "shell-session"})

SHELL_TAGS = frozenset({"sh", "bash", "shell", "console", "shell-session", "zsh", "cmd", "bat",
                        "powershell", "ps", "ps1", "terminal", "fish",
                        # (a Dockerfile's RUN steps are shell commands)
                        "dockerfile", "docker", "containerfile"})

# C, C++ and CUDA: code the bot cannot run (it runs Python).
NATIVE_TAGS = frozenset({"c", "cpp", "c++", "cc", "cxx", "h", "hpp", "cuda", "cu", "objc",
                         "objective-c"})

NATIVE_LINE_RE = Pattern(
    r"^\s*(?:#include\s*[<\"]|using namespace\s|namespace\s+\w+\s*\{|template\s*<|"
    r"(?:int|void|static|auto)\s+\w+\s*\([^)]*\)\s*\{?\s*$|std::|TVM_REGISTER_GLOBAL\b|"
    r"__global__\s)"
)

MAX_UNFENCED_LINES = 5000

MAX_UNFENCED_RUNS = 20

MAX_UNFENCED_PARSES = 5000

UNFENCED_LOOKAHEAD = 60

ASK = (
    "Could you paste a minimal, self-contained Python script that shows the problem (in a "
    "```python code block)? The bot will then run it against the current TVM and report back."
)

BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__builtins__"}

TRACEBACK_RE = Pattern(r"^\s*Traceback \(most recent call last\)")

ERROR_LINE_RE = Pattern(
    r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z][\w]*(?:Error|Exception|Exit|Interrupt|Fault|Warning)\b"
    r"(?:\s*:.*)?$"
)

# An output line that shows the run failing (which of several commands shown is the report's).
FAILED_OUTPUT_RE = Pattern(
    r"^\s*(?:Traceback \(most recent call last\)|(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|"
    r"Exception)\b|Segmentation fault|Aborted|Illegal instruction|Bus error|"
    r"Floating point exception|Fatal Python error|terminate called|Check failed)"
)

# TVMScript as TVM prints it: a decorated module or function, annotated buffers and tensors.
PRINTED_IR_RE = Pattern(r"@(?:T\.prim_func|R\.function|I\.ir_module)\b|\b(?:T\.Buffer|R\.Tensor)\(")

# A fence line, opening or closing (```` ``` ````, ``~~~python``).
FENCE_RE = Pattern(r"^\s{0,3}(?:`{3,}|~{3,})")

OUTPUT_LINE_RE = Pattern(
    r"^\s*(?:Traceback \(most recent call last\)"
    r"|\[\d\d:\d\d:\d\d\]"  # TVM log lines
    r"|Segmentation fault|Aborted|Illegal instruction|Bus error|Floating point exception"
    r"|free\(\)|double free|munmap_chunk|terminate called|corrupted "
    r"|Fatal Python error|Current thread|Thread 0x|  File \".*\", line \d+"
    r"|error: |warning: |\d+: +(?:tvm|TVM)|Check failed"
    r"|(?i:output|result|results|expected|actual|got|error|log|logs)\s*:\s*$)"
)

# A shell prompt line: "$ python repro.py", "(venv) user@host:~$ ls", "PS C:\\> python x.py".
# Pieces of shell prompts, written so that no two quantifiers compete for the same characters
# (``\S*@\S*[$#]`` is quadratic on a line of ``@``): a virtualenv ``(venv) ``, ``user@host:~$``.
VENV = r"\([^\s()]+\)\s*"
USER_AT_HOST = r"[^\s@]*@[^\s$#]*[$#]"
SHELL_LINE_RE = Pattern(rf"^\s*(?:{VENV})?(?:{USER_AT_HOST}|\$|PS [^>]*>)\s")

PROSE_LINE_RE = Pattern(r"^[A-Z][a-z']+(?:,? [A-Za-z'(),]+){3,}[.:!?]?\s*$")

STRONG_START_RE = Pattern(
    r"^\s*(?:import\s+[A-Za-z_][\w.]*|from\s+[\w.]+\s+import\s+\S)"
)

# Code pasted without its imports: "x = relay.var(...)", "@T.prim_func", "with tvm.target...".
WEAK_START_RE = Pattern(
    r"^\s*(?:[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_]\w*)*\s*=\s*[A-Za-z_][\w.]*\(|"
    r"@(?:tvm\.|T\.|R\.|I\.|relax\.|tir\.)|with tvm\.)"
)

TVM_NAMES_RE = Pattern(r"\b(?:tvm|relay|relax|tir|te|topi|T|R|I)\.\w")

IPY_IN_RE = Pattern(r"^\s*In \[\d*\]: ?")

IPY_CONT_RE = Pattern(r"^\s*\.\.\.+: ?")

# A notebook cell pasted from Jupyter: ``In [3]:`` alone on its line, the cell's code below it,
# up to ``Out[3]:``, the next cell, or the ``-----`` rule of an IPython traceback.
IPY_CELL_RE = Pattern(r"^\s*In \[\d*\]:\s*$")
IPY_CELL_END_RE = Pattern(r"^\s*(?:Out\[\d*\]:|In \[\d*\]:|-{20,}\s*$)")

SHELL_PROMPT = rf"(?:[^\s$#>]*[$#%>]\s*|PS [^>]*>\s*|{VENV}[$#]?\s*)?"

PY_EXE = r"(?:python(?:\d(?:\.\d+)?)?|py)(?:\.exe)?"

# (options before ``-c``: ``-u``, ``-X faulthandler``, ``-W error``)
_PY_OPTS = r"((?:\s+-[A-Za-z]+|\s+-[XW]\s*[\w:=.]+)*)"
PY_DASH_C_RE = Pattern(rf"(?:^|[\s`'\"$>;&|(]){PY_EXE}{_PY_OPTS}\s+-c\s+(?=\S)")

PY_REPL_RE = Pattern(rf"^\s*{SHELL_PROMPT}{PY_EXE}(?:\s+-[iuqBE]+)*\s*$")

PY_FILE_RE = Pattern(
    rf"(?:^|[\s`'\"$>;&|(=]){PY_EXE}{_PY_OPTS}\s+((?:[\w.~-]*[/\\])*[\w.-]+\.py)\b([^\n`]*)"
)

# Arguments given in prose, without the command: "run it with `--target llvm`", "pass it
# `--crash`", "call the script with the arguments `--n 3`".
RUN_WITH_ARGS_RE = Pattern(
    r"\b(?:run|call|invoke|start|execute|launch|pass)\w*\s+(?:it|this|that|the (?:script|"
    r"file|program|repro\w*))\s+(?:with\s+)?(?:the\s+)?(?:arguments?\s+|flags?\s+|options?\s+)?"
    r"`(-{1,2}[A-Za-z][^`\n]{0,200})`",
    re.I,
)

PYTEST_RE = Pattern(r"(?:^|[\s`$>])(?:python\d?\s+-m\s+)?pytest\b([^\n`]*)")

TEST_FILE_RE = Pattern(r"(?:^|[/\\])(?:test_[\w-]*|[\w-]*_test)\.py$")

# A markdown link (not an image): label, URL. Whether the URL is an attachment is checked after
# the match (ATTACHMENT_URL_RE): one pattern with both would backtrack over long URLs.
ATTACH_RE = Pattern(r"(?<!!)\[([^\[\]\n]{1,300})\]\((https?://[^()\s]{1,2000})\)")
ATTACHMENT_URL_RE = Pattern(
    r"user-attachments|/files/|/assets/|"
    r"\.(?:zip|tar|gz|tgz|7z|rar|py|ipynb|onnx|pt|pth|pb|tflite|txt|log|json|so)$"
)

# The issue template's own sentences (its HTML comments are counted apart, by
# ``bot.extract.notes.html_comments``: a ``<!--.*?-->`` here was quadratic on a line of
# unclosed ``<!--``).
TEMPLATE_RE = Pattern(
    r"What you were expecting|What actually happened|Preferably a minimal script|"
    r"Any environment details, such as|A clear and concise description|"
    r"Steps to reproduce the behavior|\bPlease describe\b",
    re.I,
)

HEADING_RE = Pattern(r"^\s{0,3}#{1,6}\s+\S")

SECTION_WORDS_RE = Pattern(
    r"steps to reproduce|to reproduce|reproduc|expected behaviou?r|actual behaviou?r|environment|"
    r"triage|description|additional context|error|output|log|traceback",
    re.I,
)

VARIANT_RE = Pattern(
    r"\b(?:works?|working|worked|succeeds?|succeeded|successfully|passes|passed|runs fine|is fine|"
    r"all (?:good|fine|ok|okay)|(?:is|looks) (?:good|ok|okay)|"
    r"no (?:error|problem|issue|crash)s?|work-?around|instead(?!\s+of\b)|alternatively|expected (?:output|result)|"
    r"correct (?:output|result|version)|fixed version|without (?:the )?(?:error|bug|crash))\b",
    re.I,
)

# An intro that says the block fails ("What fails:", "this one crashes", "doesn't work"):
# with VARIANT_RE, tells "what works: A ... what fails: B" apart.
FAILS_INTRO_RE = Pattern(
    r"\b(?:fails?|failing|failed|crash(?:es|ed|ing)?|segfaults?|errors?|breaks?|broken|wrong|"
    r"raises?|throws?|does(?:n'?t| not) work|not working|hangs?)\b",
    re.I,
)

INCOMPLETE_RE = Pattern(
    r"\bnot (?:copying|pasting|including|posting|sharing|showing) (?:it|them|that|all|here|"
    r"the (?:whole|full|entire|rest|code|model|script|program))\b|"
    r"\b(?:can'?t|cannot|could not|couldn'?t|unable to) (?:share|post|include|paste|disclose|"
    r"release) (?:the|my|it|all|this|our)\b"
    # (not the model or data: "I can't share the original model" above a whole script)
    r"(?! (?:\w+ )?(?:models?|weights?|data(?:set)?|checkpoints?|inputs?|files?|tensors?|"
    r"images?)\b)|"
    r"\b(?:rest|part|parts|remainder) of (?:the|my|our) (?:code|script|model|program) "
    r"(?:is |are |was |were )?(?:omitted|left out|not shown|not included)|"
    r"\b(?:left|cut) out\b|\bpseudo-?code\b|"
    r"\bincomplete (?:code|script|snippet|example)\b|"
    r"\b(?:code|script|snippet|example) is (?:incomplete|not complete|not runnable)\b|"
    r"\brather involved\b|\btoo (?:long|large|big|complex) to (?:post|paste|share|include)\b",
    re.I,
)

# A model or data file named in the clause: "(head.onnx is our exported head, can't share it)"
# holds back that file, not the script.
_FILE_NAMED_RE = Pattern(
    # (starts only where a name starts, and is bounded: linear on a hostile run of "a.a.a.")
    r"(?<![\w.-])[\w.-]{1,100}?\.(?:onnx|pt|pth|pb|tflite|h5|bin|npy|npz|params|safetensors|so|tar"
    r"|pkl|ckpt)\b",
    re.I,
)


def said_incomplete(text: str) -> re.Match[str] | None:
    """Where ``text`` says its code is incomplete (INCOMPLETE_RE), not of a file it names."""
    for m in INCOMPLETE_RE.finditer(text):
        ends = [(i, c) for c in (". ", ";", "(", "\n") if (i := text.rfind(c, 0, m.start())) >= 0]
        start = max((i + len(c) for i, c in ends), default=0)
        if _FILE_NAMED_RE.search(text[start:m.start()]):
            continue
        return m
    return None

# The author's comment that continues the script above ("Sorry, forgot the last part of the
# script, this goes right after the compile:").
CONTINUES_RE = Pattern(
    r"\b(?:forgot|forgotten|left out|missed|omitted|cut off)\b[^.\n]{0,60}?\b(?:part|rest|end|"
    r"lines?|bit|code|step|call|half)\b"
    r"|\b(?:the )?(?:rest|remainder|remaining part|last part|second half|second part|end) of "
    r"(?:the |my )?(?:script|code|repro\w*|program|example|snippet)\b"
    r"|\bgoes (?:right )?(?:after|below|at the end)\b"
    r"|\b(?:append|add) (?:this|these(?: lines)?|it) (?:at|to) the end\b"
    # "put it after the print", "add this after the compile", "paste these below the script"
    r"|\b(?:put|add|append|paste|insert) (?:it|this|these(?: lines)?|that) (?:right )?(?:after|below|"
    r"at the (?:end|bottom))\b",
    re.I,
)

REPRO_WORDS_RE = Pattern(r"\b(?:repro|reproduc\w*|minimal|mre|mwe)\b", re.I)
# Another commenter's script that isolates the report's problem in TVM alone ("I tried to
# isolate the layer norm, here is a script with only TVM + numpy", "a standalone check of the op
# itself"): the repro when the issue has none of its own.
ISOLATED_RE = Pattern(
    r"\bisolat(?:e|ed|ing)\b|\b(?:standalone|stand-alone|self-contained)\b|"
    r"\b(?:with )?only (?:tvm|relax|te|tir|tirx)\b(?:\s*(?:\+|and)\s*numpy)?|"
    r"\bwithout (?:the )?(?:model|onnx|torch|pytorch|tensorflow|tflite|frontend|importer)\b", re.I)

ENV_SECTION_RE = Pattern(r"^\s*(?:environment|env|system info|versions?)\b", re.I)

SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'",
                        "\u00a0": " ", "\u2212": "-"})

SMALLER_RE = Pattern(
    r"\b(?:smaller|simpler|minimal|more minimal|minimi[sz]ed|reduced|shorter|simplified|updated|"
    r"cleaner|self-contained|standalone|stand-alone|complete|full|new|real|actual|correct|proper|"
    r"exact)\s+"
    r"(?:(?:and|,)\s+\w+\s+)?(?:repro\w*|example|script|test ?case|version|code|snippet|program|"
    r"case|mre|mwe|trigger)\b|"
    r"\b(?:smaller|simpler|minimal|more minimal|minimi[sz]ed|reduced|shorter|simplified|"
    r"self-contained|standalone|stand-alone|complete|runnable)\s+(?:one|module|model|graph)\b|"
    # "here is the whole thing", "the whole script"
    r"\bthe whole (?:thing|script|code|program|example|repro|file)\b|\b(?:the )?(?:real|actual|right|correct) one\b|"
    # "ignore the script above": the block below replaces it
    r"\bignore (?:the|my) (?:\w+ )?(?:script|code|snippet|example|block|one|version) above\b|"
    r"\b(?:repro\w*|example|script|code|test ?case)\s+(?:is\s+|was\s+)?(?:reduced|simplified|"
    r"minimi[sz]ed|updated|shortened)\b|\bsimplified\s+(?:it|further|the)\b|\bfurther reduced\b|"
    # "I reduced it", "cut it down", "boiled it down", "narrowed it down to"
    r"\b(?:reduced|minimi[sz]ed|shrank|shrunk)\s+(?:it|this)\b|"
    # "I reduced to pure relax", "reduced it to plain Relax", "simplified to a te.compute"
    r"\b(?:i|we)\s+(?:reduced|minimi[sz]ed|simplified)\s+(?:it\s+|this\s+)?(?:down\s+)?to\b|"
    r"\b(?:cut|boiled|narrowed|stripped|trimmed)\s+(?:it|this|the \w+)\s+down\b|"
    # "I trimmed the script too much when pasting": the one above is not the repro
    r"\b(?:trimmed|cut|stripped|simplified|reduced)\s+(?:it|this|the \w+)\s+too much\b|"
    # "Minimized, no data files needed:" (the word alone, opening the paragraph)
    r"(?m:^)\W{0,3}(?:minimi[sz]ed|reduced|simplified)\s*[,:(\u2014-]|"
    # "Reduced to the relax op:", "Simplified down to TE:" (the word opening the paragraph)
    r"(?m:^)\W{0,3}(?:minimi[sz]ed|reduced|simplified)\s+(?:it\s+|this\s+)?(?:down\s+)?to\b|"
    r"\bno (?:data |model |external |extra )?files? (?:needed|required)\b|"
    # "relax only version", "pure TVM repro", "without torch:": TVM alone, no frontend
    r"\b(?:relax|tvm|tir|tirx|te)[- ]only\s+(?:\w+\s+)?(?:repro\w*|example|script|version|code|snippet)\b|"
    r"\bpure[- ](?:relax|tvm|tir|tirx|te)\s+(?:repro\w*|example|script|version|code|snippet)\b|"
    r"\bwithout (?:torch|pytorch|onnx|tensorflow|tflite|keras|the frontend|the importer)\b",
    re.I,
)

# The author corrects their own script ("the script above had a typo, use this one", "here is
# the corrected script", "I fixed the typo", "sorry, wrong snippet above, this is the right
# one"): the block below replaces it, even when the words around it would read as a working
# variant ("try this one instead") or a fix (FIX_RE).
CORRECTED_RE = Pattern(
    r"\b(?:had|has|contained|contains) an? (?:typo|mistake|error|bug)\b[^\n]{0,80}?"
    r"\b(?:use|try|run) this (?:one|instead)\b|"
    r"\b(?:corrected|typo-free) (?:script|version|code|repro\w*|example|snippet)\b|"
    r"\bfixed (?:the |a |my )?typos?\b|"
    # "sorry, wrong snippet above", "I pasted the wrong script", "this is the right one"
    r"\bwrong (?:snippet|script|copy|paste|file)\b|"
    r"\b(?:pasted|posted|copied|shared) (?:the|a) wrong (?:\w+ )?(?:version|code|example)\b|"
    r"\b(?:this|here) is the (?:right|correct|actual) (?:one|script|snippet|code|version|repro\w*)\b|"
    # "oops, copy-paste from an old file. this is the one i run:"
    r"\bcopy[- ]?past(?:e|ed|ing) (?:from an? (?:old|other|older|different|wrong|bigger|larger)|error|mistake)\b|"
    # "sorry, copy paste from bigger file. Fixed:" (the word alone, as the label of the block)
    r"\b(?:fixed|corrected)(?: (?:script|snippet|code|version|repro\w*|example))?\s*:\s*\Z|"
    # "You're right, with `g = oc // 2`:" (agreeing with a review of the script, re-posting it)
    r"^\W{0,3}you(?:'re| are) (?:right|correct)\b|"
    r"\b(?:this|here) is the (?:one|script|snippet|code|version) i (?:actually )?(?:run|ran|use|used)\b|"
    # "the script above has a typo from my editing (`summ`), the right script is:"
    r"\b(?:the|my) (?:right|correct|corrected|fixed|intended) (?:script|snippet|code|version|"
    r"repro\w*|example) (?:is|would be)\b|"
    r"\b(?:script|snippet|code|example|repro\w*) (?:above |i (?:posted|pasted) )?(?:has|had|"
    r"contains|contained) an? typo\b",
    re.I,
)

# A block its own intro tells readers not to run: "first version (don't use, dtype of B was
# float by mistake)", "ignore this one, wrong file": the next script stands in its place.
DISOWNED_RE = Pattern(
    r"\b(?:don'?t|do not) (?:use|run|try)(?: (?:this|it|that)(?: one)?)?\s*(?:[,.;:)!]|\s-|$)"
    r"|\bignore (?:this|it|that)(?: one| block| snippet)?\b"
    r"|\b(?:was|is) (?:wrong|broken|a mistake)\b[^.\n]{0,30}\b(?:below|next|see)\b",
    re.I,
)

FIX_RE = Pattern(
    r"\b(?:fix|fixed|fixes|patch|patched|after (?:applying|changing|adding|removing)|"
    r"with (?:the|this|my) (?:change|changes|modification)|resolved?|solved?)\b",
    re.I,
)

REPRO_SECTION_RE = Pattern(
    r"^\W*(?:steps to reproduce|to reproduce|how to reproduce|reproduc\w*|repro\b|"
    r"(?:code|script|steps) to reproduce|minimal (?:code|example|script|repro\w*)|"
    r"(?:sample|example|test) (?:code|script)|code\b)",
    re.I,
)

RESULT_SECTION_RE = Pattern(
    r"^\W*(?:expected|actual|observed|current)\s+(?:behaviou?r|results?|outputs?)",
    re.I,
)

# A section title without markdown: "Steps to reproduce", "Expected behavior:", "Environment".
PLAIN_TITLE_RE = Pattern(
    r"^\s*(?:steps to reproduce|to reproduce|how to reproduce|reproduction|minimal reproduction|"
    r"(?:expected|actual|observed|current) (?:behaviou?r|results?|outputs?)|environment)\s*:?\s*$",
    re.I,
)

VERSION_WORDS_RE = Pattern(
    r"\b(?:versions?|environment|env|commit|installed|pip list|build info|system info)\b",
    re.I,
)

VERSION_OUT_RE = Pattern(
    r"^\s*['\"]?v?\d+\.\d+[\w.+-]*['\"]?\s*$"
    # or build information such as ``libinfo()`` prints: ``USE_CUDA: ON``, ``GIT_COMMIT_HASH: ab12``
    r"|^\s*[A-Z][A-Z0-9_]{2,}:\s*\S"
)

# "This will produce the following IRModule:", "which outputs:": what follows is output.
OUTPUT_INTRO_RE = Pattern(
    r"\b(?:produces?|prints?|outputs?|gives?|returns?|results? in|shows?|displays?|got|dumps?)\b"
    r"[^.\n]{0,60}:\s*$",
    re.I,
)

# An import statement quoted in prose: "import tvm", `from tvm import relay`.
PROSE_IMPORT_RE = Pattern(
    r"[\"`“]((?:import\s+[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*"
    r"|from\s+[A-Za-z_][\w.]*\s+import\s+[\w, ]+?))[\"`”]"
)

OUTPUT_PROSE_RE = Pattern(
    r"\b(?:output|outputs|prints?|printed|print-?out|results?|gives?|got|returns?|shows?|"
    r"displays?|log|stdout|stderr)\b\W*$",
    re.I,
)

OUTPUT_LABEL_RE = Pattern(r"^\W*[\w .()/+-]{1,40}:\W*$")

NOT_OUTPUT_LABEL_RE = Pattern(
    r"\b(?:code|script|repro\w*|example|snippet|steps?|test\w*|program|source|minimal|"
    r"python|run|running|usage|input|model|following|this|here)\b",
    re.I,
)

OUTPUT_SECTION_RE = Pattern(
    r"^\W*(?:(?:expected|actual|observed|current|wrong|incorrect|correct)\s+"
    r"(?:behaviou?r|results?|outputs?|values?)|outputs?|results?|logs?|stdout|what happens)\b",
    re.I,
)

ELISION_RE = Pattern(r"^\s*(?:\.{4,}|…+)\s*$")

LINE_NO_RE = Pattern(r"^\s*(\d{1,5})(?:[:.|]\s?|\s|$)")

IR_HEADER_RE = Pattern(r"^([ \t]*)#[ \t]*((?:from tvm\.script import \w+ as \w+|import tvm)[ \t]*)$",
                           re.M)

HTML_ENTITY_RE = Pattern(r"&(?:quot|lt|gt|amp|apos|nbsp|#\d+|#x[0-9a-fA-F]+);")

PRE_OPEN_RE = Pattern(r"^(\s*)(?:<(?:pre|code)\b[^>]*>)+", re.I)

PRE_CLOSE_RE = Pattern(r"(?:</(?:code|pre)>)+\s*$", re.I)

SESSION_END_RE = Pattern(r"^\s*(?:exit|quit)\(\)\s*$")

TB_FRAME_RE = Pattern(r'^\s*File "[^"]*", line \d+')

SIMPLE_ASSIGN_RE = Pattern(r"^\s*[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*=(?!=)\s*\S")

# A heredoc's first line: ``cat > repro.py <<EOF``, or the interpreter fed one: ``python -
# <<'EOF'``, ``python3 <<EOF``, ``python -u - <<EOF``; group 1 is the end word. Matched one line
# at a time; the end line is looked up, not scanned for (bot.extract.shell.heredoc_body).
HEREDOC_HEAD_RE = Pattern(
    r"(?:\bcat\s*>\s*['\"]?[\w./-]+\.py['\"]?|(?<![\w./-])python[\d.]*(?:\s+-[A-Za-z]\w*)*"
    r"(?:\s+-)?)\s*<<-?\s*['\"]?(\w+)['\"]?"
)

# ``$ cat repro.py``; PowerShell's ``PS C:\x> Get-Content .\repro.py``; cmd's ``C:\x> type repro.py``
CAT_RE = Pattern(
    rf"^\s*(?:{VENV})?(?:{USER_AT_HOST}|\$|%|#|PS [^>]*>|[A-Za-z]:\\[^>]*>)\s*"
    r"(?:cat|(?i:get-content)|gc|type|more)\s+[\w./\\~:-]+\.py\s*$"
)

FILE_NAME = (r"[\w./\\~-]*[\w-]\.(?:onnx|pt|pth|pb|pbtxt|tflite|h5|keras|npy|npz|txt|json|"
              r"params|so|tar|bin|pkl|pickle|csv|jpg|jpeg|png|mlir|ll|bc|ckpt|safetensors|"
              r"caffemodel|prototxt|mar|engine|tmp)")

FILE_ARG_RE = Pattern(rf"^{FILE_NAME}$", re.I)

FILE_LITERAL_RE = Pattern(rf"[\"']{FILE_NAME}[\"']", re.I)

# A line starting with a prompt that names the user or the drive: ``user@host$``, ``PS C:\\>``.
SHELL_PROMPT_START_RE = Pattern(rf"^\s*(?:{USER_AT_HOST}|PS [^>]*>|[A-Za-z]:\\[^>]*>)")
PROMPT_LINE_RE = Pattern(rf"^\s*(?:{VENV})?(?:{USER_AT_HOST}|\$|PS [^>]*>|[A-Za-z]:\\[^>]*>)")

HTML_LINE_RE = Pattern(r"^\s*</?(?:details|summary|p|div|br|hr|pre)\b[^>]*>.*$", re.I)

ESCAPED_PROMPT_RE = Pattern(r"^(\s*)\\>\\?>\\?>(?= |$)")

PY_VERSIONED_RE = Pattern(r"^(python|py|ipython)[-_ ]?\d+(?:\.\d+)*$")

# The author's own words saying a script quoted from someone else fails for them too.
# Someone else's code that they say is another problem ("maybe related, this errors out for
# me (not a segfault though)"): not the reporter's repro.
# The author turns a reduction down: "the reduced one does not crash the same for me, only the
# onnx one", "yours doesn't reproduce here".
REJECTS_RE = Pattern(
    r"\b(?:does(?:n'?t| not)|did(?:n'?t| not)|won'?t)\s+(?:crash|fail|reproduce|segfault|happen|"
    r"show)\w*\s+(?:the same|for me|here)\b|\bonly (?:the|with|in) (?:onnx|torch|pytorch|original|"
    r"first|full)\b"
    # "no, your version works for me", "the reduced one passes here"
    r"|\b(?:your|the (?:reduced|smaller|relax|new)) (?:one|version|script|repro)\s+(?:works|passes|"
    r"runs fine|is fine)\b", re.I)

NOT_SAME_RE = Pattern(
    r"\b(?:maybe|might be|possibly|perhaps|could be|probably) related\b|\bnot (?:the )?same\b|"
    r"\b(?:a )?different (?:error|issue|problem|failure|bug|crash)\b|\bunrelated\b|"
    r"\bnot an? [\w-]+ though\b",
    re.I,
)

# The author takes back the report ("Never mind, my mistake: with the fixed script it
# passes"): their corrected script is the one to run.
RETRACTS_RE = Pattern(
    r"\b(?:never ?mind|nvm|my (?:mistake|bad|fault|error)|user error|false alarm|i was wrong|"
    r"not a (?:tvm )?bug(?: after all)?|sorry for the noise)\b",
    re.I,
)

# The author adopts another commenter's script ("yes, that's exactly my problem, let's use your
# script as the repro").
ADOPTS_RE = Pattern(
    r"\b(?:use|take|go with) your (?:smaller |minimal |reduced |simpler )?(?:script|repro\w*|"
    r"example|version|snippet|code)\b|"
    r"\byour (?:smaller |minimal |reduced |simpler )?(?:script|repro\w*|example|snippet|code|"
    r"version) (?:is|shows|reproduces|captures) (?:exactly )?(?:my|the same|this) "
    r"(?:problem|issue|bug|case)\b|"
    # the author confirms it: "yes, that is exactly it, same error with your script", "your
    # snippet gives the same error for me"
    r"\bsame (?:error|failure|crash|message|traceback|problem|issue)\b[^.\n]{0,60}\b(?:with|from) "
    r"your (?:smaller |minimal |reduced |simpler )?(?:script|repro\w*|example|snippet|code|"
    r"version)\b|"
    r"\byour (?:smaller |minimal |reduced |simpler )?(?:script|repro\w*|example|snippet|code|"
    r"version) (?:gives|shows|raises|hits|produces|reproduces|fails with) (?:me )?"
    r"(?:exactly )?the same\b|"
    # "yes this is exactly what I see in my model" (right after another's script)
    r"\b(?:this|that|it)(?: is|'s) exactly (?:what|the (?:error|problem|issue|crash|thing|bug)) "
    r"(?:i|we) (?:see|get|saw|got|have|hit)\b|"
    # "thanks, yes the reduced one crashes the same for me"
    r"\b(?:the|your) (?:smaller|minimal|reduced|simpler|shorter|cut-down) (?:one|script|repro\w*|"
    r"example|version|snippet|code|case)\b(?![^.\n]{0,40}\b(?:not|never|doesn't|does not|don't)\b)"
    r"[^.\n]{0,40}\b(?:the same|too|as well)\b",
    re.I,
)

# Another commenter offers their script and asks the author to check it ("Can you confirm this
# gives you the same error?"); the author's reply that opens with a yes ("yes, that is the same
# error I see") adopts it.
CONFIRM_ASK_RE = Pattern(
    r"\b(?:can|could) you (?:please )?(?:confirm|check|verify)\b|"
    r"\b(?:does|do) (?:this|that|it) (?:give|show|raise|reproduce|trigger|hit)\b[^?\n]{0,40}\?|"
    r"\bis (?:this|that|it) the same (?:error|issue|problem|crash|failure)\b",
    re.I,
)
CONFIRMS_RE = Pattern(
    r"^\s*(?:yes|yep|yeah|yup|confirmed|i can confirm|exactly|correct)\b(?![^.\n]{0,40}\bbut\b)",
    re.I,
)

# Another user's "same here" over a script of their own (not a quote of someone else's).
SAME_HERE_RE = Pattern(r"^\W{0,3}(?:same here|same for me|same issue here|me too)\b", re.I | re.M)

QUOTE_FAILS_TOO_RE = Pattern(
    r"\b(?:(?:also|too|as well|still|same)\b[^.\n]{0,40}\b(?:fails?|failing|crash\w*|errors?|"
    r"segfaults?|breaks?|broken|aborts?|n[o']t work\w*|does\s?n[o']t work\w*)|(?:fails?|failing|crash\w*|errors? out|segfaults?|breaks?)"
    r"\b[^.\n]{0,40}\b(?:too|also|as well|for me|on my (?:side|machine|end))|"
    r"(?:can|could) reproduce|reproduces? (?:it|this|the (?:issue|problem|bug|crash))|"
    r"(?:triggers?|hits?|shows?) (?:it|this|the (?:issue|problem|bug|crash|error))"
    r"(?: (?:for me|too|as well|on my (?:side|machine|end)))|"
    r"same (?:error|crash|failure|problem|issue|segfault|traceback))\b",
    re.I,
)


# Another commenter's script offered as the report's script moved to the current API: "I ported
# it to Relax on 0.27", "here it is rewritten for the new API", "updated the script for main".
PORTED_RE = Pattern(
    r"\b(?:ported|porting|rewrote|rewritten|translated|converted|migrated|updated|adapted)\s+(?:it|this|the "
    r"(?:script|repro|example|code|test))?\s*(?:over\s+)?(?:to|for|in|into|with|on)\s+"
    r"(?:relax|tirx|s_tir|(?:the )?(?:new|current|latest) (?:api|tvm)|(?:current|latest) (?:main|tvm)"
    r"|main|v?0\.\d+|tvm (?:main|v?0\.\d+)|the unity)\b"
    r"|\b(?:relax|current[- ]api|new[- ]api) (?:port|version) of (?:it|this|the (?:script|repro))\b"
    # "so I rewrote it with `create_prim_func` + `tvm.compile` as in the docs"
    r"|\b(?:rewrote|rewritten|ported|migrated)\s+(?:it|this|the (?:script|repro|example|code))\s+"
    r"(?:with|using)\s+[^.\n]{0,60}\b(?:create_prim_func|tvm\.compile|relax|tirx|s_tir|the docs)\b"
    # "here is the script with the new API", "still happens with relax on 0.27:"
    r"|\b(?:with|using|for|in|on) the (?:new|current|latest) (?:api|tvm|version|main)\b"
    r"|\bstill (?:happens?|the case|fails|crashes|reproduces|there|broken)\b[^.\n]{0,40}"
    r"\b(?:relax|main|v?0\.\d+|current|latest|new api)\b"
    # "here is the relax version I used", "Standalone TE version:"
    r"|\b(?:the|a|my|standalone|stand-alone|self-contained|pure|plain) (?:relax|tirx|te|tir|s_tir|"
    r"tvm|current[- ]api|new[- ]api) version\b"
    # "yes still happen. relax version on 0.22:" (a sentence of its own; not "TVM version: 0.13")
    r"|(?:^|[.!?:]\s+)(?:relax|tirx|s_tir|te) version\b"
    # "on recent versions `tvm.const` moved:", "Trying with current relax:"
    r"|\b(?:on|in|for) (?:the )?(?:recent|newer|latest|current) (?:versions?|tvm|releases?|main)\b"
    r"|\b(?:trying|tried|running|ran|re-?checked|checked) (?:it )?(?:with|on|in) (?:the )?"
    r"(?:current|latest|new|recent) (?:relax|api|tvm|main|version)\b"
    # "ported, on 0.27.0:" (the word alone opening the comment)
    r"|^\W*(?:ported|rewritten|migrated|updated)\s*[,:.]"
    # "On 0.27.0.post1:" heading a retest (a comment that starts with the version it ran on)
    r"|^\W*(?:(?:re-?)?(?:tested|tried|checked|ran it) )?(?:on|with|using) (?:tvm |apache-tvm )?"
    r"v?0\.\d+(?:\.\d+)?(?:\.post\d+|rc\d+|\.dev\d*)?\s*[:,]"
    # "ok I ported it, this is what I run now on 0.27.0.post1:" (not "ported it from torch")
    r"|\b(?:ported|migrated|rewrote|rewritten) (?:it|this|the (?:script|repro|example|code))\b"
    r"(?!\s+(?:from|back)\b)"
    r"|\bwhat i (?:now )?(?:run|ran|use)(?: now)? (?:on|with) (?:v?0\.\d+|main|tvm|the (?:current|latest))",
    re.I,
)
