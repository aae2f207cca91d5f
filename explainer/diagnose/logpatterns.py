"""The patterns the log scanner reads lines with: log prefixes, one-line markers, openers, error headers.

Knowledge of what torch and the tools around it print; the scanning logic is in _logscan.
"""

from __future__ import annotations

import re

from explainer._lazyre import cached_compile, lazy_compile

# ANSI sequences: colours and cursor moves (CSI), character set selection ("\x1b(B", which tput's sgr0 prints after its
# reset). (Not OSC's hyperlinks: those are kept, to be shown escaped.)
ANSI_RE = lazy_compile(r"\x1b(?:\[[0-9;?]*[A-Za-z]|[()][A-Za-z0-9])")
# The same codes with their escape character lost (a terminal's output pasted into a web page shows them as text):
# "[1m[31mE   RuntimeError: ...[0m" from pytest, "[36m(RayWorkerWrapper pid=4009)[0m " from Ray. Taken off a line
# that begins with one.
ANSI_RESIDUE_RE = lazy_compile(r"\[(?:\d{1,3};)*\d{1,3}m")
ANSI_RESIDUE_LEAD_RE = lazy_compile(r"^(?:\[(?:\d{1,3};)*\d{1,3}m)+")
# torchrun's "[rank3]: ", and mpirun's --tag-output (horovodrun, Open MPI) "[1,3]<stderr>:" (the job, then the rank; the
# line's own indent right after it); SageMaker's MPI launcher names the rank and the host: "[1,mpirank:7,algo-1]<stderr>:"
RANK_RE = lazy_compile(r"^\s*\[(?:(?:rank|default)(?P<rank>\d+)\]:\s?|\d+,(?:mpirank:)?(?P<mpi_rank>\d+)(?:,[\w.-]+)?\]<std(?:out|err)>:)")
PREFIX_RES = [
    # 2024-05-01 10:00:00,123 - trainer - ERROR - ...   /  [2024-05-01 10:00:00] ERROR: ...
    # (and the component after the level: "2022-08-11 16:58:36.000 [INFO] [Driver] ...")
    # (a YARN container's log, as Philly/AML collected it: "2020-08-11T12:37:40.000Z /container_e2240_15838_01_000010: ")
    # (the logger's name and the line that logged, kept as a glog prefix's place is: "... root line:14 WARNING: ")
    # (TorchServe's padded level and its worker's logger: "2020-12-20 17:35:39,775 [WARN ] W-9004-DocTag_1.0-stderr
    # org.pytorch.serve.wlm.WorkerLifeCycle - ")
    lazy_compile(r"^\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?(?: /container_\w+:)?"
               r"(?:\s*[-|:]?\s*(?:\[?[\w.]+\]?\s*[-|:]\s*|(?P<src>[\w.]+ line:\d+) )?(?:\[?(?:ERROR|WARNING|WARN|INFO|CRITICAL|DEBUG|FATAL)(?: ?\])?)\s*[-|:]?"
               r"(?:\s*\[(?!rank\d)[A-Za-z][\w.-]*\](?= |$)|\s*W-\d+-\S+ org\.pytorch\.serve\.[\w.]+ -(?= ))?)?\s*"),
    # glog: E0501 10:00:00.123456 1234 file.cpp:12] ...; torch's Python logs in the same layout, with dynamo's compile
    # id after the place where one is being compiled: W0301 12:00:00.123000 123 torch/_dynamo/convert_frame.py:1550] [0/8]
    lazy_compile(r"^[EWIF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+\s+(?P<src>[^\]]+)\](?: \[!?\d+(?:/\d+)+(?:_\d+)?\])?\s*"),
    # ERROR:root:...  /  ERROR: ...  (not torch.jit.trace's TracingCheckError, which lists its findings as
    # "ERROR: Graphs differed across invocations!" lines of its own message)
    lazy_compile(r"^(?:ERROR|CRITICAL|FATAL):(?!\s*(?:Graphs|Tensor-valued Constant nodes) differed)(?:[\w.]+:)?\s*"),
    # bracketed glog, as ProcessGroupNCCL prints it: [E501 10:10:05.408271257 ProcessGroupNCCL.cpp:607]
    # and, in older versions, [E ProcessGroupNCCL.cpp:737], on Windows [W ..\torch\csrc\autograd\python_anomaly_mode.cpp:104];
    # torch's own c10 logger leaves the month unpadded: [W404 00:15:21.693690333 ProcessGroupNCCL.cpp:4561] (April 4)
    lazy_compile(r"^\[[EWIF](?:\d{3,4} \d{2}:\d{2}:\d{2}\.\d+)?\s*(?:\d+\s+)?(?P<src>[\w./\\-]+:\d+)\]\s*"),
    # pytest's short test summary: "FAILED tests/test_x.py::test_y[param] - RuntimeError: ..." (ERROR for a failed setup);
    # the error's line, one record per test
    lazy_compile(r"^(?:FAILED|ERROR) (?P<src>[^\s:]+\.py::\S.*?) - (?=(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::|\s*$))"),
    # a label in Chinese before the error line: "报错：RuntimeError: ..." ("error:"); not VS Code's "发生异常: RuntimeError"
    # alone on its line, an opener whose frames follow the message (OPENER_RES)
    lazy_compile(r"^(?!发生异常: (?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\s*$)[\u4e00-\u9fff]{1,6}\s*[:：]\s*"
                 r"(?=(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning)\b)"),
]
DOCKER_PREFIX_RE = lazy_compile(r"^[A-Za-z0-9][\w.-]*\s+\|(?: |$)")  # docker compose's service column: "app-1  | "
# vLLM's logger, on every line of a traceback it logs, after Ray's or its own worker's name where one printed it:
# "(VllmWorkerProcess pid=760) ERROR 07-24 08:26:01 multiproc_worker_utils.py:226] ", "... [core.py:1240] ", and the rank of
# a newer worker: "(VllmWorker rank=6 pid=409) ERROR 07-23 19:34:51 [multiproc_executor.py:487] "
VLLM_PREFIX_RE = lazy_compile(r"^(?:\([\w-]+ (?:rank=(?P<rank>\d+) )?pid=\d+(?:, ip=[\d.]+)?\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} "
                            r"\d{2}:\d{2}:\d{2}(?:\.\d+)? \[?[\w.-]+:\d+\](?: |$)")
# Ray, on every line a worker or actor printed: "(pid=1522026) ", "(RayTrainWorker pid=3181, ip=10.0.0.5) ", a named
# actor's "(qORZMeWorkerDict_0:0 WorkerDict pid=798105) "; vLLM's worker, printing through it: "(VllmWorker rank=6 pid=409) "
RAY_PREFIX_RE = lazy_compile(r"^\((?:[\w.:-]+ ){0,2}?(?:rank=(?P<rank>\d+) )?pid=\d+(?:, ip=[\d.]+)?\)(?: |$)")
# pytest's report: the error's lines under an "E" column ("E" then the failing line's indent, at least 3 spaces)
PYTEST_PREFIX_RE = lazy_compile(r"^E(?: {3,}|\t)\s*")
# Python 3.11's report of an exception group: each member's traceback in a column ("    | " before each line, "+-" lines
# around it), nested two spaces deeper per level (a border line alone reads as a blank line)
GROUP_COLUMN_RE = lazy_compile(r"^(?:  )+(?:[|+] |\+[-+ \d]*$)")
PREFIX_RES += [VLLM_PREFIX_RE, RAY_PREFIX_RE, DOCKER_PREFIX_RE, PYTEST_PREFIX_RE, GROUP_COLUMN_RE,
               lazy_compile(r"^(?:>|- \[[ xX]\])\s?")]  # the last: quotes (and a markdown task list's boxes: "- [ ] ")
# a quoted line continues the quote, a container's line its output, pytest's E column the error, vLLM's and Ray's
# prefixes the traceback they log line by line, an exception group's column its member's traceback; other prefixes
# start a record
# torch_xla's xla_dist, on every line a TPU pod's worker printed: "2021-04-23 18:14:43 10.164.0.29 [3] " (the time, the
# worker's address and its index in the pod); LibKGE's log has the same shape, the job's short id after the time
# ("2021-08-16 11:12:01.946932 [dc8a8332] "): both keep the line's own indent
XLA_DIST_PREFIX_RE = lazy_compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?: \d{1,3}(?:\.\d{1,3}){3} \[\d+\]|\.\d{6} \[[0-9a-f]{8}\])(?: |$)")
# pdsh (DeepSpeed's and other multi-node launchers), on every line a node printed: its address or its host's name,
# "29.127.65.230: [rank0]: ...", "worker0: ValueError: ..." (a name that ends in its number, no other host name; not
# pybind11's "arg0: torch.Tensor, ..." of a signature wrapped onto a line of its own)
PDSH_PREFIX_RE = lazy_compile(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|(?!arg\d)[a-z]+-?\d{1,4}): ")
# TorchX, on every line a replica printed: its role and replica index, then torchrun's tee column of the local rank
# ("trainer/0 [1]:AttributeError: ...") or a log record's level ("trainer/0 ERROR:torch.distributed...")
TORCHX_PREFIX_RE = lazy_compile(r"^[A-Za-z_][\w.-]*/\d+ (?:\[\d+\]:|(?=(?:ERROR|WARNING|INFO|DEBUG|CRITICAL)[: ]))")
# loguru's default layout: "2026-01-21 19:23:12.066 | ERROR    | __main__:cli_evaluate:348 - message", its place the
# module, the function and the line (an app's own layout may leave the line out and end the place with a column:
# "| ERROR    | app.core.registry:load_all_models | message"); the place is kept as a glog prefix's is (src)
LOGURU_PREFIX_RE = lazy_compile(r"^(?:\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\s*)?\|\s*(?:TRACE|DEBUG|INFO|SUCCESS|"
                                r"WARNING|ERROR|CRITICAL)\s*\|\s*(?P<src>[\w.<>-]+:[A-Za-z_<][\w<>.]*(?::\d+)?)\s+[-|]\s+")
# a CI's time stamp alone, on every line of the job's output (Jenkins' timestamper: "10:08:34  KeyError: None", the
# line's own indent after its two spaces; CircleCI's, with the date: "Jan 07 20:36:55 AssertionError: ...")
TIME_PREFIX_RE = lazy_compile(r"^(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} )?\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?(?:  ?|$)")
# GitHub Actions' log: each line of a step's output after its time, "2026-02-13T15:56:24.8388156Z " (seven decimals, UTC),
# the time alone on a blank line; a line of the same output, not a log record of its own
GHA_PREFIX_RE = lazy_compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z(?: |$)")
CONTINUATION_PREFIXES = (*PREFIX_RES[-6:], XLA_DIST_PREFIX_RE, PDSH_PREFIX_RE, TORCHX_PREFIX_RE, TIME_PREFIX_RE, GHA_PREFIX_RE)
QUOTE_PREFIX_RE = PREFIX_RES[-1]
GLOG_PREFIX_RE = PREFIX_RES[1]
# prefixes of a process's output that the process's own log prefixes may follow (and a quote, of any line)
OUTER_PREFIXES = (RAY_PREFIX_RE, DOCKER_PREFIX_RE, QUOTE_PREFIX_RE, XLA_DIST_PREFIX_RE, PDSH_PREFIX_RE, TORCHX_PREFIX_RE, TIME_PREFIX_RE, GHA_PREFIX_RE)
# others with nothing after: a value (a glog prefix alone is an empty line of a log record: torch's Python logs put the
# prefix on every line of a record)
EMPTY_AFTER_PREFIX = (VLLM_PREFIX_RE, RAY_PREFIX_RE, DOCKER_PREFIX_RE, PYTEST_PREFIX_RE, GLOG_PREFIX_RE, GROUP_COLUMN_RE,
                      QUOTE_PREFIX_RE, XLA_DIST_PREFIX_RE, TIME_PREFIX_RE, GHA_PREFIX_RE)  # (a quote's blank line: ">")
# Each prefix with the characters it can begin with (None: any), so that most lines try only a few of the patterns
# (xla_dist's before the timestamp's, which would take its time alone).
PREFIX_TABLE = [(GHA_PREFIX_RE, "0123456789"), (XLA_DIST_PREFIX_RE, "0123456789"), (PDSH_PREFIX_RE, "0123456789abcdefghijklmnopqrstuvwxyz"),
                (TORCHX_PREFIX_RE, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"),
               (LOGURU_PREFIX_RE, "0123456789|"), (TIME_PREFIX_RE, "012JFMASOND"),
                *zip(PREFIX_RES, ["[0123456789", "EWIF", "ECF", "[", "FE", None, "(DIWEC", "(", None, "E", " ", ">-"], strict=True)]
# A tqdm progress bar that other output was written right after, with no line break between them (the bar redraws
# its line with \r, and a crash prints where the bar ended): "Epoch 12/200:  29%|██▉   | 116/404 [01:31<03:42,  1.30it/s,
# loss=0.27]THCudaCheck FAIL ...". Tried only on lines that hold "%|".
# (the bar redrawn several times on the line, where a log kept no \r between the redraws)
TQDM_BAR_RE = lazy_compile(r"^(?:[^\n]*?\d+%\|[^|]*\|\s*[\d.]+[kMG]?/(?:[\d.]+[kMG]?|\?)\s*\[[^\]]*\])+\s*")
# Messages some components log without a 'SomeError:' header. Each pattern has a 'message' group
# (where the explained text starts) and may have a 'rank' group.
# Compiled now: the scanner tells markers and openers apart by their match's .re (see logscan).
MARKER_RES = [
    cached_compile(r"(?:\[Rank (?P<rank>\d+)\]\s*)?(?:NCCL watchdog thread terminated with exception: "
                   r"(?:\[Rank \d+\]\s*)?)?(?P<message>Watchdog caught collective operation timeout: .*)"),
    # The NCCL heartbeat monitor, when the watchdog itself hangs. Its process group's prefix stays in the message
    # ("[PG 5 Rank 0] "); the rank it names is the rank in that group, the global rank only in the default group 0.
    cached_compile(r"(?P<message>(?:\[PG (?:ID )?(?:0 [^\]]*?Rank (?P<rank>\d+)|[^\]]*)\]\s*)?"
                   r"(?:ProcessGroup\w*'s watchdog got stuck for \d+ ?seconds|Heartbeat monitor timed out).*)"),
    # c10d's TCPStore client, before the rendezvous error that reports it.
    cached_compile(r"(?P<message>The client socket has timed out after \d+m?s while trying to connect to .*)"),
    # A DataLoader worker's dying words, written by its signal handler.
    cached_compile(r"(?P<message>Unexpected (?:bus error|segmentation fault|floating-point exception) encountered in worker.*)"),
    # fastai's DataLoader, when it cannot draw one batch (printed, then either the error or nothing).
    cached_compile(r"(?P<message>Could not do one pass in your dataloader, there is something wrong in it.*)"),
    # torchdata's StatefulDataLoader, resuming an IterableDataset that has no state of its own (logged as a warning).
    cached_compile(r"(?P<message>Neither dataset nor iter\(dataset\) defines state_dict/load_state_dict so we are naively fast-forwarding.*)"),
    # argparse refusing the --local_rank / --local-rank argument torch.distributed.launch adds to each worker's command
    # line ("train.py: error: unrecognized arguments: --local-rank=0"); a SystemExit, so printed with no traceback.
    cached_compile(r"^\s*(?P<message>[^\s:][^:]*: error: unrecognized arguments: (?:.*\s)?--local[-_]rank\b.*)"),
    # torch.distributed.elastic's agent, when a worker dies: the exit code and the signal, before the summary.
    cached_compile(r"(?P<message>failed \(exitcode: -?\d+\) local_rank: \d+ \(pid: \d+\) of binary: .*)"),
    # Inductor's max-autotune logs a benchmark choice that failed to precompile, then goes on with the others.
    cached_compile(r"(?P<message>Exception No valid triton configs\..*)"),
    # A CUDA kernel's own assertion, printed (once per thread) before "device-side assert triggered".
    # (a paste in markdown inline code loses the backticks around the condition)
    cached_compile(r"(?P<message>[^\s`]*\.cuh?:\d+:.*?Assertion\s*(?:`.*?`|\S.*?)\s*failed\.?)"),
    # bitsandbytes' CUDA_CHECK_RETURN: "Error <the CUDA runtime's message> at line 167 in file <its .cu source>", printed
    # just before the library exits the process (a warning printed above it is not why it failed)
    cached_compile(r"(?<![\w.])(?P<message>Error [a-z][\w ,'/-]{2,120}? at line \d+ in file \S.*?\.(?:cu|cuh|cpp))\s*$"),
    # torch.multiprocessing.spawn's report of a child's error, over the child's traceback (its "ProcessRaisedException: "
    # line above it may be left out of a paste)
    cached_compile(r"^\s*(?P<message>--\s*Process \d+ terminated with the following error:?)\s*$"),
]
# Records that begin without a 'SomeError:' line and may go on over the next lines: a warning as
# `warnings` prints it ("path.py:12: UserWarning: text"), VS Code's "Exception has occurred: Type".
# The 'message' group is where the explained text starts.
OPENER_RES = [
    # (torch's C++ warnings, TORCH_WARN, name its C++ source: "..\aten\src\ATen\native\TensorFactories.cpp:361: UserWarning")
    # (IPython < 8 names a cell's code "<ipython-input-97-37d0eadce605>")
    cached_compile(r"^`?(?P<path>[^\s`<].*?\.(?:py|cpp|cc|cu|h)|<ipython-input-\d+-[0-9a-f]+>):(?P<line>\d+): (?P<message>[A-Z]\w*Warning:.*)$"),
    # (with debugpy's note where it stopped elsewhere: "       (note: full exception trace is shown but execution is
    # paused at: _run_module_as_main)")
    cached_compile(r"^(?:Exception has occurred|发生异常): (?P<message>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))"
                   r"(?:\s+\(note: full exception trace is shown but execution is paused at: [^()]*\))?\s*$"),
    # A DataLoader worker's re-raise pasted without its 'SomeError:' prefix; its Original Traceback follows.
    cached_compile(r"^(?P<message>Caught [A-Z]\w* in DataLoader worker process \d+\.?)\s*$"),
    # A C++ exception nothing caught: std::terminate names its type; its what() follows on the next line.
    cached_compile(r"^\s*(?P<message>terminate called after throwing an instance of '[\w:]+')\s*$"),
    # Anomaly mode's warning (glog's "[W python_anomaly_mode.cpp:104] " already stripped): the frames of
    # the forward call that made the failing backward follow.
    cached_compile(r"^(?P<message>Warning: Error detected in \w+\..*)$"),
    # torch <= 1.0's THC check of a CUDA call, printed on stderr after a kernel's assertion and before the Python
    # error; the reason may follow on the next line ("error=98 : " then "unrecognized error code").
    cached_compile(r"^(?P<message>THCudaCheck FAIL file=\S+ line=\d+ error=\d+ ?:.*)$"),
]
# A logger's one-line report of an exception, its type as str() of the class, then where it was raised:
# "<class 'RuntimeError'> at trainer.py:101 - CUDA error: ..." (the record's text: "RuntimeError: CUDA error: ...").
# Tried only on lines that hold "<class '".
CLASS_OPENER = cached_compile(r"<class '(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)'> at (?P<path>[^\s:]+\.py):(?P<line>\d+) - "
                              r"(?P<message>\S.*)$")
WARNING_OPENER = OPENER_RES[0]
VSCODE_OPENER = OPENER_RES[1]
TERMINATE_OPENER = OPENER_RES[3]
# Openers of one component's report of a failure that another report (the Python error) may repeat.
LOGGED_OPENERS = (TERMINATE_OPENER, OPENER_RES[5])
FORWARD_TRACE_RE = lazy_compile(r"Traceback of forward call that caused the error:\s*$")
WHAT_RE = lazy_compile(r"^\s*what\(\):(?:\s|$)")  # empty when the message follows on the next lines (TorchScript's)
# Anything that could begin an error: a block of log without any of these is skipped unread.
# A frame line counts: pasted tracebacks often lose their first line.
# Every marker's and opener's words must be here, or block scanning skips what line scanning finds.
# Plain strings: grep -F searches a large file for parts of them (GREP_LITERALS below).
TRIGGER_LITERALS = ("Traceback", "Error", "Exception", "Interrupt", "Exit", "Failure", "Warning", "Watchdog caught",
                    "watchdog got stuck", "Heartbeat monitor timed out", "client socket has timed out",
                    "Assertion", "terminate called", "发生异常", "exitcode", "encountered in worker", "Could not do one pass",
                    "Neither dataset nor iter(dataset)", "File ", '", line ', ".py in ",
                    "<ipython-input-", "Cell In", "Input In [", "THCudaCheck FAIL", "<class '",
                    "terminated with the following error", "unrecognized arguments",
                    ".py](http")  # (a frame's file as a markdown link: "[/x/base_class.py](https://localhost:8080/#) in f")
TRIGGER_RE = lazy_compile("|".join(re.escape(literal) for literal in TRIGGER_LITERALS))
# What grep -F searches a large file for (explainer/diagnose/logfile.py): a part of each trigger literal, chosen to
# start with a byte that is rare in logs. grep's time is set by how often the literals' first bytes occur (it jumps
# from one such byte to the next), and lowercase letters, digits, spaces, '.' and '-' fill a training log. Every
# trigger literal holds one of these, so grep finds every block TRIGGER_RE would; a block it finds is searched with
# TRIGGER_RE again before it is read, so a part that also occurs elsewhere costs a decode, never a different result.
GREP_LITERALS = ("Traceback", "Error", "Exception", "Interrupt", "Exit", "Failure", "Warning", "Watchdog caught",
                 "watchdog got stuck", "Heartbeat monitor timed out", "client socket has timed out", "Assertion",
                 "called", "发生异常", "xitcode", "countered in worker", "Could not do one pass", "Neither dataset nor", "File ", '", line ',
                 "py in ", "<ipython-input-", "Cell In", "Input In [", "THCudaCheck FAIL", "<class '",
                 "with the following error", "cognized arguments", "](http")
# A log record that names an error word only in passing ("WARNING dataloader.py:88] worker 3 slow (0 errors so far,
# no RuntimeError)"): the trigger literals it may hold, and what else in it could begin a record or change what a later
# line means (an error word before a colon, inline code, a JSON message, ComfyUI's node, a chained exception's line,
# loguru's values, rich's panels, pytest's places and sections, a prompt, an arrow); such a line, read while nothing is
# open, is skipped as a line without a trigger is (logblocks.py)
MENTION_WORDS = frozenset(("Error", "Exception", "Warning", "Interrupt", "Exit", "Failure"))
MENTION_BLOCKERS_RE = lazy_compile(r'[`│╭╰└]|"message"|Node Type|when executing|During handling|direct cause|'
                                   r"(?:Error|Exception|Warning|Interrupt|Exit|Failure):|\.pyx?:\d+(?::| in\b)|"
                                   r"^\s*(?:[->→]|_{3}|={3})")
# A rank's tag holds one of these (RANK_RE; Ray's and vLLM's "rank=3"): searched one by one, each far faster than together.
RANK_TAG_RES = tuple(lazy_compile(re.escape(literal)) for literal in ("rank", "[default", "]<std"))
INLINE_CODE_RE = lazy_compile(r"`([^`\n]{8,2000})`")
# Python's header, or IPython's: the error type, then "Traceback (most recent call last)" at the right margin.
# (a web page that collapsed IPython's run of spaces leaves one: "RuntimeError Traceback (most recent call last)")
TRACEBACK_RE = lazy_compile(r"^\s*(?P<ipython>(?:[A-Za-z_]\w*\.)*[A-Z]\w*\s+)?Traceback \(most recent call last\)(?(ipython)|:)\s*$")
# (a private class too: "torch._C._LinAlgError: linalg.cholesky: ...", as torch 1.13-2.1 name it; pytest's Failed only
# where pytest.raises/warns found nothing: "Failed: DID NOT RAISE <class 'X'>"; pyarrow's ArrowInvalid, named without
# "Error", a paste may show alone: "ArrowInvalid: Parquet magic bytes not found in footer. ...")
EXCEPTION_RE = lazy_compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*(?:_?[A-Z]\w*(?:Error|Exception|Interrupt|Exit|Failure|Warning)|Exception|"
    r"OutOfMemoryError|AcceleratorError|ArrowInvalid)|torch(?:\.\w+)*\.exc\.[A-Z]\w*|Failed(?=: DID NOT (?:RAISE|WARN)))(?::\s?(?P<msg>.*))?$")
# The error line under a traceback's frames, for a type EXCEPTION_RE does not know by its name: module-qualified
# ("triton.runtime.errors.OutOfResources: out of resource: shared memory") or StopIteration.
# (an extension's exception may be named in lower case: OpenCV's "cv2.error: ...", with its message)
BARE_TYPE_RE = lazy_compile(r"[\w.]+(?:Error|Exception):\s*$")  # an error's type alone, its message on the next line
TRACEBACK_END_RE = lazy_compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)+[A-Z]\w*|StopIteration|(?:[A-Za-z_]\w*\.)+[a-z]\w*(?=: \S))"
                                r"(?::\s?(?P<msg>.*))?$")
# Parts of a message that torch prints after a blank line (dynamo's "from user code:" and its hints).
# ComfyUI names the node that failed: "Error occurred when executing SUPIR_Upscale:" (before 2024), or its
# error report's "- **Node Type:** ExpressionEditor" (quoted with "> " when pasted into a GitHub comment).
# (A node's name may end in parentheses: "KSampler (Efficient)"; a paste that lost its line breaks goes on after the colon.)
# Node names hold a pack's tag in brackets or a '|' ("[ComfyUI-3D] Animate Anyone Sampler", "AttentionCouple|cgem156")
COMFY_NODE_RE = lazy_compile(r"^\s*(?:>\s*)*(?:Error occurred when executing (?P<running>[\w.\-\[\]| ]+?(?:\s*\([^()]*\))?):(?:\s|$)|"
                           r"[-*]?\s*\**Node Type:\**\s*(?P<type>[\w.\-]+)\s*$)")
# The error dialog of ComfyUI's newer frontend, copied: the node's class name alone on the first line
# ("VAEEncode", "WanVideoSampler"), then the message without its type.
COMFY_TITLE_RE = lazy_compile(r"^(?!\w*(?:Error|Exception|Warning|Interrupt|Exit|Traceback)$)(?=[A-Z]\w*[a-z])[A-Z]\w*[A-Z]\w*$")
AFTER_BLANK_RE = lazy_compile(r"(from user code:|While executing |Original traceback:|Set TORCH_LOGS=|"
                            # a data-dependent guard's place: "Caused by: x = ...  # <eval_with_key>.3:23 in forward
                            # (file:line in f)" (torch.fx.experimental.symbolic_shapes)
                            r"Caused by: |consider using data-dependent friendly APIs|"
                            r"Set torch\._dynamo\.config\.|You can suppress this exception|"
                            # torch.onnx.export's report: "## Exception summary", then "<class 'KeyError'>: ..."
                            r"## Exception summary|<class '[\w.]+'>: |"
                            # uv's explanation of a failed build ("hint: This error likely indicates that X depends
                            # on torch"); cuBLAS's call, when a paste broke the line before its arguments
                            r"hint: |\(\s*handle,|"
                            # torch >= 2.6's weights-only unpickler: "WeightsUnpickler error: ", a blank line, its reason;
                            # its two numbered options, each after a blank line
                            r"Unsupported operand \d+\s*$|\(1\) In PyTorch 2\.6, we changed|\(2\) Alternatively, to load|"
                            # torch.testing.assert_close's report: "Tensor-likes are not close!", a blank line, its counts
                            # (and, after another blank line, "The failure occurred for item [0]")
                            r"Mismatched elements: \d+ / \d+ \(|The failure occurred for item \[)")
REPRO_PART_RE = lazy_compile(r"(import torch|ConvolutionParams|input: TensorDescriptor|output: TensorDescriptor|weight: FilterDescriptor)")
# A file name that GitHub's markdown turned into a link, copied back as markdown: "[a.so](http://a.so/)".
# Colab links a notebook frame's cell: "[<ipython-input-3-d2a3>](https://localhost:8080/#) in <cell line: 1>()",
# and a library frame's file: "[/usr/local/lib/python3.9/dist-packages/x/compile.py](https://localhost:8080/#) in f(model)".
AUTOLINK_RE = lazy_compile(r"\[([^\]\s]+)\]\(https?://\1/?\)|"
                           r"\[(<ipython-input-[\w-]+>|(?:[A-Za-z]:)?[/\\][^\]\n]*?\.py)\]\(https?://[^)\s]*\)")
# pytest's line under the error it reports: where it was raised and its type ("torch/serialization.py:1529: UnpicklingError")
PYTEST_CRASH_RE = lazy_compile(r"^(?P<path>(?:[A-Za-z]:)?[^\s:][^:]*?\.py):(?P<line>\d+): (?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)\s*$")
# pytest's --tb=long report (and the first and last entries of its default --tb=auto) prints each entry's source, the
# failing line marked ">   ", then the place alone: "tests/test_x.py:16: " (the last entry's names the error type, as
# PYTEST_CRASH_RE reads it). The entry's function is the one whose "def" line its source begins with.
PYTEST_PLACE_RE = lazy_compile(r"^(?P<path>(?:[A-Za-z]:)?[^\s:][^:]*?\.py):(?P<line>\d+):\s*$")
PYTEST_MARKED_LINE = ">   "
SOURCE_DEF_RE = lazy_compile(r"^\s+(?:async\s+)?def\s+(?P<name>\w+)\s*\(")
# pytest's section lines: "_____ test_forward _____" over a failed test's report, "===== short test summary info ====="
PYTEST_SECTION_RE = lazy_compile(r"^(?:_{3,}|={3,}) \S.*? (?:_{3,}|={3,})\s*$")
# pytest -q's closing tally, with no rule of "=" around it: "1 failed, 3 passed, 2 warnings in 4.51s (0:00:04)"
PYTEST_TALLY_RE = lazy_compile(r"^\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun)"
                               r"(?:, \d+ \w+)* in [\d.]+s(?: \(\d+:\d{2}:\d{2}\))?\s*$")
CHAIN_RE = lazy_compile(r"^\s*(During handling of the above exception|The above exception was the direct cause)")
# A DataLoader worker's re-raise pasted without its "Original Traceback" line: the worker's frames follow it.
WORKER_HEAD_RE = lazy_compile(r"Caught [A-Z]\w* in DataLoader worker process \d+\.?\s*$")
ORIGINAL_TRACEBACK = "Original Traceback (most recent call last):"
# A TorchScript error quotes the source it could not compile, down to the "~~~ <--- HERE" line under the culprit;
# the quote may hold blank lines. These lines begin such a quote.
SCRIPT_QUOTE_RE = lazy_compile(r'^\s*(?:File "[^"]+", line \d+\s*$|at \S+:\d+:\d+\s*$|@torch\.jit\.|def \w+\()')
HERE_MARK = "<--- HERE"
# An error inside a JSON string, as torchelastic's error handler logs its error file: "message": "SomeError: text".
JSON_MESSAGE_RE = lazy_compile(r'^\s*"message"\s*:\s*"(?P<text>(?:[^"\\]|\\.)*)"\s*,?\s*$')
# (torch 0.4's worker re-raise: the worker's traceback is the message: "TypeError: Traceback (most recent call last):")
EMBEDDED_RE = lazy_compile(r"^(?:(?P<head>.*?)\n\s*Original |(?P<type>[\w.]{1,80}): )Traceback \(most recent call last\):\s*\n"
                           r"(?P<rest>.*)\Z", re.S)
WORKER_RE = lazy_compile(r"in DataLoader worker process (?P<worker>\d+)")
# What differs between copies of one error printed by several ranks or worker processes.
DEDUPE_RES = [
    # (also a name that ends in one: torch.distributed.launch's "--local_rank=2", "global_rank: 3")
    (lazy_compile(r"(?i)(?:\b|(?<=_))(rank|process|pid)\s*[=:]?\s*\d+"), r"\1 N"),
    (lazy_compile(r"\bpid\(s\) [\d, ]+"), "pid(s) N"),
    (lazy_compile(r"\bran for \d+ milliseconds"), "ran for N milliseconds"),
    (lazy_compile(r"block: \[[\d,\s]+\], thread: \[[\d,\s]+\]"), "block: N, thread: N"),
    # where torch's C++ raised it, on the line under a logged message one copy of it has and another has not
    (lazy_compile(r"\nException raised from [^\n]*"), ""),
]


def dedupe_key(text: str) -> str:
    """Messages that differ only by rank, process number or elapsed time are the same error."""
    for pattern, replacement in DEDUPE_RES:
        text = pattern.sub(replacement, text)
    return text


def could_open(line: str) -> bool:
    """Whether line may hold an opener or a marker: the words of every marker and opener are trigger literals, but
    for a DataLoader worker's re-raise of an error type without one ("Caught StopIteration in DataLoader worker
    process 0"). One search, where trying each pattern would be sixteen."""
    return TRIGGER_RE.search(line) is not None or "in DataLoader worker process" in line


def opener_match(line: str) -> re.Match | None:
    found = _first_match(OPENER_RES, line)
    return CLASS_OPENER.search(line) if found is None and "<class '" in line else found


def marker_match(line: str) -> re.Match | None:
    return _first_match(MARKER_RES, line)


def _first_match(patterns: list[re.Pattern], line: str) -> re.Match | None:
    # The opener patterns anchor themselves with ^; markers may sit anywhere in the line.
    for pattern in patterns:
        found = pattern.search(line)
        if found:
            return found
    return None


def node_named(line: str) -> str:
    """The ComfyUI node a line names ("Error occurred when executing X:", "Node Type: X"), or ""."""
    if "Node Type" not in line and "when executing" not in line:
        return ""
    node = COMFY_NODE_RE.match(line)
    return (node.group("running") or node.group("type")) if node is not None else ""


def comfyui_title(line: str) -> str:
    """The node's name, where line is the first line of ComfyUI's error dialog, or ""."""
    line = line.strip()
    return line if COMFY_TITLE_RE.match(line) else ""


def comfyui_node(text: str) -> str:
    """The ComfyUI node a pasted message names, or "" (a title on the first line, or before the message on one line)."""
    named = next((node for line in text.splitlines() if (node := node_named(line))), "")
    if named:
        return named
    title, _, rest = text.strip().partition("\n")
    if not rest.strip():  # the dialog's lines run together: its title, then the message's first word, capitalised
        title, _, rest = title.partition(" ")
        return comfyui_title(title) if rest[:1].isupper() and rest[1:2].islower() else ""
    return comfyui_title(title)


def introduces_inner(lines: list[str]) -> bool:
    """A record whose last line announces the error that follows ("BackendCompilerFailed: backend='inductor'
    raised:"): the next 'SomeError:' line is its inner error, not a new record."""
    return bool(lines) and lines[-1].rstrip().endswith(" raised:")


def pytest_section(line: str) -> bool:
    if line[:3] in ("___", "==="):
        return PYTEST_SECTION_RE.match(line) is not None
    return line[:1].isdigit() and " in " in line and PYTEST_TALLY_RE.match(line) is not None
