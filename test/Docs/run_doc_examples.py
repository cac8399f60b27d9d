"""Runs the shell and Python examples of Markdown files and parses their
MLIR, so that the commands and IR the README and docs/ show cannot drift
from what recast does.

  run_doc_examples.py --root R --build B [--python P] FILE.md...

Every ```mlir block is parsed and verified by `recast-opt` (a fragment that
is not a whole module says so with a skip line, below). Every ```sh and
```python block runs, in order, in a scratch directory (one
per file, so that a block may use what an earlier one wrote) that sees the
repository's top-level folders (examples/, build/, scripts/, ...) through
links, so that relative paths work as written and files the examples write
stay out of the tree. `recast-*` and LLVM's tools are on PATH, and so is
the project's Python environment (`python`, `python3`, `pip`, IREE's tools),
as after `source ~/.cache/recast/venv/bin/activate`.

A block that cannot run here says why on the line before it:

  <!-- doc-test: skip: a GPU machine -->

Its commands are still checked: every recast tool it names must exist and
accept each `--option` given to it (as `--help-hidden` lists them).

Prints PASS / SKIP / FAIL per block; exits 1 when a block fails.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
ANNOTATION = re.compile(r"<!--\s*doc-test:\s*skip:\s*(.*?)\s*-->")
TOOL = re.compile(r"(?:^|/)(recast-[a-z-]+)$")
RUN_TIMEOUT_S = 600


def blocks(path):
    """(language, first line number, text, skip reason or None) of each
    fenced block in `path`."""
    lines = open(path, encoding="utf-8").read().splitlines()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        # A block inside a list item is indented: its lines lose the fence's
        # indentation.
        indent, language = match.group(1), match.group(2)
        previous = lines[index - 1] if index > 0 else ""
        skip = ANNOTATION.search(previous)
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith("```"):
            end += 1
        body = [line[len(indent):] if line.startswith(indent) else line
                for line in lines[index + 1:end]]
        yield (language, index + 2, "\n".join(body) + "\n",
               skip.group(1) if skip else None)
        index = end + 1


def commands(text):
    """The shell commands of a block: continuation lines joined, comments
    dropped, split at pipes and command separators."""
    joined = re.sub(r"\\\n\s*", " ", text)
    for line in joined.splitlines():
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars="|;&")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            tokens = list(lexer)
        except ValueError:
            continue
        command = []
        for token in tokens:
            if token in ("|", ";", "&&", "||", "&"):
                if command:
                    yield command
                command = []
            else:
                command.append(token)
        if command:
            yield command


_help_cache = {}


def tool_options(tool, build):
    """The options `tool` accepts, from its --help-hidden (LLVM's option
    list, or the usage line of a tool with a parser of its own)."""
    if tool not in _help_cache:
        path = os.path.join(build, "bin", tool)
        if not os.access(path, os.X_OK):
            _help_cache[tool] = None
        else:
            out = subprocess.run([path, "--help-hidden"], capture_output=True,
                                 text=True)
            _help_cache[tool] = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)",
                                               out.stdout + out.stderr))
    return _help_cache[tool]


def is_optional_target(tool, root):
    """Whether `tool` is a target the default build leaves out (a
    benchmark built on request), declared in a CMakeLists.txt."""
    for directory, _, names in os.walk(root):
        if "CMakeLists.txt" in names and "build" not in directory:
            text = open(os.path.join(directory, "CMakeLists.txt")).read()
            if re.search(r"add_\w*executable\(\s*" + re.escape(tool) + r"\b",
                         text):
                return True
    return False


def check_options(text, build, root):
    """Why a skipped block's commands would not run as written, or ''."""
    problems = []
    for command in commands(text):
        # The command word, after any VAR=value assignments.
        position = 0
        while position < len(command) and re.match(r"^\w+=", command[position]):
            position += 1
        match = TOOL.search(command[position]) if position < len(command) \
            else None
        if not match:
            continue
        tool = match.group(1)
        options = tool_options(tool, build)
        if options is None:
            if not is_optional_target(tool, root):
                problems.append(f"no tool {tool} in {build}/bin")
            continue
        for argument in command[position + 1:]:
            if not argument.startswith("-") or argument == "-":
                continue
            name = argument.split("=", 1)[0].split("[", 1)[0]
            if name not in options and "-" + name not in options:
                problems.append(f"{tool} has no option {name}")
    return "; ".join(problems)


def scratch_directory(root):
    directory = tempfile.mkdtemp(prefix="recast-doc-")
    for entry in os.listdir(root):
        if entry.startswith(".") or entry == "build":
            continue
        os.symlink(os.path.join(root, entry), os.path.join(directory, entry))
    return directory


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--python", default=sys.executable,
                        help="the project's Python environment's python")
    parser.add_argument("files", nargs="+")
    options = parser.parse_args()
    root = os.path.abspath(options.root)
    build = os.path.abspath(options.build)
    venv_bin = os.path.dirname(os.path.abspath(options.python))

    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([
        os.path.join(build, "bin"), venv_bin, "/usr/lib/llvm-22/bin",
        env.get("PATH", "")])
    env["PYTHONPATH"] = os.path.join(root, "python")
    env["RECAST_BUILD_DIR"] = build

    failed = 0
    for path in options.files:
        shown = os.path.relpath(path, root)
        directory = None
        for language, line, text, skip in blocks(path):
            if language not in ("sh", "python", "mlir"):
                continue
            where = f"{shown}:{line}"
            if skip is not None:
                problem = check_options(text, build, root) \
                    if language == "sh" \
                    else ""
                if problem:
                    print(f"FAIL {where}: {problem}")
                    failed += 1
                else:
                    print(f"SKIP {where} ({skip})")
                continue
            if directory is None:
                directory = scratch_directory(root)
                # `build` is the build directory given, wherever it is.
                os.symlink(build, os.path.join(directory, "build"))
            stdin = None
            if language == "sh":
                argv = ["bash", "-e", "-o", "pipefail", "-c", text]
            elif language == "python":
                argv = [options.python, "-c", text]
            else:
                argv, stdin = ["recast-opt", "-", "-o", os.devnull], text
            try:
                result = subprocess.run(argv, cwd=directory, env=env,
                                        input=stdin, capture_output=True,
                                        text=True, timeout=RUN_TIMEOUT_S)
                ok = result.returncode == 0
                output = result.stdout + result.stderr
            except subprocess.TimeoutExpired:
                ok, output = False, f"timed out after {RUN_TIMEOUT_S} s"
            if ok:
                print(f"PASS {where}")
            else:
                failed += 1
                print(f"FAIL {where}:\n" + "\n".join(
                    "    " + l for l in output.splitlines()[-15:]))
        if directory is not None:
            # The links go, not what they point to.
            shutil.rmtree(directory, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
