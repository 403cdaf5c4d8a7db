"""Runs one of GradBench's own evals, from a GradBench checkout, against a
tool, and reports GradBench's validation of each output and the tool's
times, beside those of a second tool given the same messages in the same
run.

    python3 bench/gradbench/validate.py GRADBENCH EVAL [--compare CMD] TOOL... [-- EVAL-ARGS...]

GRADBENCH is a checkout of github.com/gradbench/gradbench, EVAL an eval
(lse, llsq, ...), TOOL the command of the tool under test:
DIR/ksc-gradbench (built by `go run ./bench/gradbench -o DIR`), or
`python3 -m gradbench.cpp manual` for GradBench's hand-written C++ (or
`tapenade` for its Tapenade C, for ba, gmm, ht and lstm), all run from
GRADBENCH. --compare CMD (one string) runs a second tool beside
it: every message goes to both, the second right after the first, and its
times are reported too, its outputs not validated. EVAL-ARGS go to the eval
(--min-seconds 0.3, -n 1000 ...). The eval and the tools are connected
directly (GradBench's intermediary, a Rust program, is not needed). The
eval validates against GradBench's manual tool, which it builds with make.
It needs numpy and pydantic (Debian's python3-numpy and python3-pydantic;
pydantic 1 is given the two methods of pydantic 2 the evals use) and
nlohmann's json.hpp (Debian's nlohmann-json3-dev).

It prints a Markdown table, a row per evaluation: the function, the
input's description, whether GradBench found the output valid, and the
median of the "evaluate" timings of each tool and their ratio; it exits 1
if any output is invalid or the tool fails.
"""

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile


class Tool:
    """A tool process, spoken to one message a line."""

    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if line == "":
            raise EOFError
        response = json.loads(line)
        if response["id"] != message["id"]:
            raise ValueError("expected message ID %d, got %r" % (message["id"], response["id"]))
        return response

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def median_ms(response):
    times = [t["nanoseconds"] for t in response.get("timings") or [] if t["name"] == "evaluate"]
    return statistics.median(times) / 1e6 if times else None


def lstm_text(gradbench):
    """GradBench's lstm eval reads its characters from a text file that a
    snapshot of the repository may lack (one of its largest files). The
    eval uses the first 8192 characters at most, as bits: with ASCII text,
    7 bits a character, whichever text it is. If the file is missing, this
    writes one, the ASCII characters of ksc's own docs, and says so."""
    path = os.path.join(gradbench, "evals", "lstm", "data", "lstm_full.txt")
    if os.path.exists(path):
        return
    docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")
    text = ""
    for f in sorted(os.listdir(docs)):
        with open(os.path.join(docs, f), encoding="utf8") as r:
            text += "".join(c for c in r.read() if c == "\n" or " " <= c <= "~")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf8") as w:
        w.write(text)
    print("note: %s was missing; wrote %d ASCII characters of ksc's docs there" % (path, len(text)), file=sys.stderr)


def main():
    args = sys.argv[1:]
    eval_args = []
    if "--" in args:
        i = args.index("--")
        args, eval_args = args[:i], args[i + 1:]
    compare = None
    if len(args) > 3 and args[2] == "--compare":
        compare = shlex.split(args[3])
        args = args[:2] + args[4:]
    if len(args) < 3:
        sys.exit(__doc__)
    gradbench, name, tool = os.path.abspath(args[0]), args[1], args[2:]

    import pydantic

    if not hasattr(pydantic.BaseModel, "model_validate"):  # pydantic 1
        pydantic.BaseModel.model_validate = classmethod(lambda cls, obj: cls.parse_obj(obj))
        pydantic.BaseModel.model_dump = lambda self, **kw: self.dict(**kw)

    sys.path.insert(0, os.path.join(gradbench, "python", "gradbench"))
    os.environ["PYTHONPATH"] = os.path.join(gradbench, "python", "gradbench")
    os.chdir(gradbench)  # the evals find GradBench's manual tool from here
    # GradBench's C++ includes "json.hpp", nlohmann's, which its Makefile
    # would download; Debian's nlohmann-json3-dev has it. The Makefile takes
    # CXXFLAGS from the environment (so does the manual tool when it is a
    # tool here and builds itself on define).
    inc = tempfile.mkdtemp(prefix="gradbench-include")
    with open(os.path.join(inc, "json.hpp"), "w") as f:
        f.write("#include <nlohmann/json.hpp>\n")
    os.environ["CXXFLAGS"] = "-std=c++17 -O3 -Wall -I../../cpp -I" + inc
    # The tapenade tool's Makefile sets CXXFLAGS itself: make's -e lets the
    # environment's win there too (--compare "python3 -m gradbench.cpp
    # tapenade").
    os.environ["MAKEFLAGS"] = (os.environ.get("MAKEFLAGS", "") + " e").strip()
    # The evals that validate against the manual tool build it; saddle and
    # particle, which it does not implement, check fixed values.
    if os.path.exists(os.path.join("tools", "manual", name + ".cpp")):
        subprocess.run(["make", "-s", "-C", "tools/manual", "bin/" + name, "NATIVE=no"], check=True, stdout=sys.stderr)

    if name == "lstm":
        lstm_text(gradbench)
    tools = [Tool(tool)] + ([Tool(compare)] if compare else [])
    from gradbench import eval as gbeval

    rows, sent = [], {}

    def send(self, message):
        message = {"id": self.id} | message
        responses = [t.send(message) for t in tools]
        sent[self.id] = (message, responses)
        if message["kind"] == "evaluate" and not responses[0].get("success"):
            rows.append((message, "failed: %s" % responses[0].get("error"), responses))
        if message["kind"] == "analysis":
            m, rs = sent[message["of"]]
            valid = "valid" if message["valid"] else "INVALID: " + (message.get("error") or "").splitlines()[0]
            rows.append((m, valid, rs))
        self.id += 1
        return responses[0]

    gbeval.SingleModuleValidatedEval.send = send
    module = __import__("gradbench.evals.%s.run" % name, fromlist=["main"])
    sys.argv = ["run"] + eval_args
    try:
        module.main()
    finally:
        for t in tools:
            t.close()

    head = "| function | input | GradBench's validation | %s (median) |" % " ".join(tool)
    if compare:
        head += " %s (median) | ratio |" % " ".join(compare)
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for m, valid, rs in rows:
        times = [median_ms(r) for r in rs]
        cells = [m["function"], m.get("description", ""), valid] + ["%.3g ms" % x if x is not None else "" for x in times]
        if compare and None not in times and times[1] > 0:
            cells.append("%.2f" % (times[0] / times[1]))
        print("| " + " | ".join(cells) + " |")
    if not rows or any(valid != "valid" for _, valid, _ in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
