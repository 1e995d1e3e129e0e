#!/usr/bin/env python3
"""check-layers.py: the structure docs/ARCHITECTURE.md describes, checked.

- Includes: every quoted #include in the program's sources must point one
  way: to a header of the same folder or of a folder lower in LAYERS.
  Folders that share a rank (model, text, report) know nothing of each
  other. Within a folder, the includes between modules (x.c and x.h count
  as one module) must not form a cycle.
- Calls: no two .c files call each other's functions, directly or around a
  loop (a file's functions are its non-static definitions).
- Errors: below cli/ nothing prints to stderr (fprintf(stderr, ...),
  fputs(..., stderr), perror, ...), and base/ formats/ nn/ model/ text/
  print nothing to stdout either; anywhere, a message goes into an error
  buffer through set_error or fail (base/errors.h), never a raw snprintf
  into err outside base/errors.c.
- Docs: every source file is in ARCHITECTURE.md's tables, and every
  function it names (`name` in backticks, a `name()`, or a known
  function's name) exists, in the file it names when it names one.
Prints each violation naming the file (and line); exits 1 on any.
"""
import os
import re
import sys

# Lowest first. A folder may include its own headers and those of lower ranks.
LAYERS = [
    ("base", 0),      # errors, files, hashes, the keyed generator
    ("formats", 1),   # JSON, safetensors
    ("nn", 2),        # layers and kernels over flat arrays
    ("model", 3),     # model.c, model.h and model/: the transformer and its checkpoint
    ("text", 3),      # datasets, tokenizers, vocabulary, labels, encoding
    ("report", 3),    # metrics, tables, plots
    ("run", 4),       # a training run: options, corpus, fit, resume, run directory
    ("cli", 5),       # the subcommands
    ("train", 6),     # train.c: the command line
]
RANK = dict(LAYERS)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    """The layer of a source path relative to the root, or None (tests, data, scripts)."""
    if path in ("model.c", "model.h"):
        return "model"
    if path == "train.c":
        return "train"
    top = path.split("/", 1)[0]
    return top if top in RANK and "/" in path else None


def module_of(path):
    return os.path.splitext(path)[0]


def sources(root):
    found = []
    for folder, _ in LAYERS:
        d = os.path.join(root, folder)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if name.endswith((".c", ".h")):
                    found.append(folder + "/" + name)
    for name in ("model.c", "model.h", "train.c"):
        if os.path.exists(os.path.join(root, name)):
            found.append(name)
    return found


def find_cycle(graph):
    """One cycle of the module graph as a list of modules, or None."""
    state = {}
    stack = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def check(root):
    problems = []
    graph = {}
    files = sources(root)
    for path in files:
        text = open(os.path.join(root, path), encoding="utf-8").read()
        layer = layer_of(path)
        for target in INCLUDE.findall(text):
            if not os.path.exists(os.path.join(root, target)):
                if "/" in target or os.path.exists(os.path.join(root, os.path.dirname(path), target)):
                    problems.append(f"{path}: includes \"{target}\", which is not a path from the project root")
                continue  # a system or third-party header (stb)
            tlayer = layer_of(target)
            if tlayer is None:
                problems.append(f"{path}: includes {target}, which belongs to no layer")
                continue
            if tlayer != layer and RANK[tlayer] >= RANK[layer]:
                problems.append(f"{path} ({layer}, rank {RANK[layer]}) includes {target} "
                                f"({tlayer}, rank {RANK[tlayer]}): includes must point to lower layers")
            a, b = module_of(path), module_of(target)
            if a != b:
                graph.setdefault(a, set()).add(b)
    cycle = find_cycle(graph)
    if cycle:
        problems.append("include cycle: " + " -> ".join(cycle))
    code = {path: strip_code(open(os.path.join(root, path), encoding="utf-8").read()) for path in files}
    problems += check_prints(code)
    problems += check_raw_errors(code)
    functions = defined_functions(code)
    problems += check_calls(code, functions)
    problems += check_docs(root, files, functions)
    return files, problems


def strip_code(text):
    """text with comments and the insides of string and char literals blanked
    (newlines kept, so offsets give the same line numbers)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


BELOW_CLI = ("base", "formats", "nn", "model", "text", "report", "run")
# prints to stderr: by name, by descriptor 2, or through perror and err.h's family
STDERR_PRINT = re.compile(
    r"\b(?:v?fprintf|fputs|fputc|putc|fwrite|vfprintf)\s*\((?:[^;()]|\([^;()]*\))*?\bstderr\b"
    r"|\b(?:perror|psignal|err|errx|warn|warnx|verr|vwarn)\s*\("
    r"|\bv?dprintf\s*\(\s*(?:2|STDERR_FILENO)\s*,|\bwrite\s*\(\s*(?:2|STDERR_FILENO)\s*,")
# a message written into an error buffer by hand instead of set_error/fail
RAW_ERROR = re.compile(r"\b(?:v?s?n?printf|strn?cpy|strn?cat)\s*\(\s*(?:err|\w+\s*(?:->|\.)\s*err)\b")


# layers that print nothing of their own: they write to a stream they are given, if at all
SILENT = ("base", "formats", "nn", "model", "text")
STDOUT_PRINT = re.compile(r"\b(?:printf|vprintf|puts|putchar)\s*\(|\bstdout\b")


def check_prints(code):
    problems = []
    for path, text in code.items():
        if layer_of(path) in SILENT:
            for m in STDOUT_PRINT.finditer(text):
                problems.append(f"{path}:{line_of(text, m.start())}: prints to stdout ({m.group(0).strip()}) in "
                                f"{layer_of(path)}/, which prints nothing: write to a stream the caller passes")
        if layer_of(path) not in BELOW_CLI:
            continue
        for m in STDERR_PRINT.finditer(text):
            problems.append(f"{path}:{line_of(text, m.start())}: prints to stderr ({m.group(0).strip()}...) below "
                            "cli/: return the message in err (base/errors.h), or write to the log stream the "
                            "caller passes")
    return problems


def check_raw_errors(code):
    problems = []
    for path, text in code.items():
        if path == "base/errors.c":
            continue   # the helpers themselves
        for m in RAW_ERROR.finditer(text):
            problems.append(f"{path}:{line_of(text, m.start())}: writes an error message by hand "
                            f"({m.group(0)}...): use set_error or fail (base/errors.h)")
    return problems


def top_level_definitions(text):
    """(name, offset, is_static) of each function defined at file level."""
    found, depth, i, start = [], 0, 0, 0   # start: where the current file-level declaration began
    n = len(text)
    while i < n:
        c = text[i]
        if c == "{":
            if depth == 0:
                head = text[start:i]
                m = re.search(r"(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$", head)
                if m and m.group(1) not in ("if", "for", "while", "switch", "sizeof") and "=" not in head[:m.start()]:
                    found.append((m.group(1), start + m.start(1), re.search(r"\bstatic\b", head[:m.start()]) is not None))
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
        elif c == "#" and depth == 0:   # a preprocessor line is no part of a declaration
            j = text.find("\n", i)
            while j > 0 and text[j - 1] == "\\":
                j = text.find("\n", j + 1)
            i = n if j < 0 else j
            start = i
            continue
        i += 1
    return found


def defined_functions(code):
    """name -> the .c files that define it (non-static), and path -> its static names."""
    public, static = {}, {}
    for path, text in code.items():
        if not path.endswith(".c"):
            continue
        for name, _, is_static in top_level_definitions(text):
            if is_static:
                static.setdefault(path, set()).add(name)
            else:
                public.setdefault(name, set()).add(path)
    return public, static


CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def check_calls(code, functions):
    """No call cycle between .c files."""
    public, static = functions
    graph, why = {}, {}
    for path, text in code.items():
        if not path.endswith(".c"):
            continue
        own = static.get(path, set())
        for m in CALL.finditer(text):
            name = m.group(1)
            if name in own or name not in public or path in public[name]:
                continue
            for target in public[name]:
                graph.setdefault(path, set()).add(target)
                why.setdefault((path, target), name)
    cycle = find_cycle(graph)
    if not cycle:
        return []
    steps = [f"{a} calls {why[(a, b)]}() of {b}" for a, b in zip(cycle, cycle[1:])]
    return ["call cycle: " + " -> ".join(cycle) + " (" + "; ".join(steps) + "): move what they share to a "
            "lower file both call"]


def check_docs(root, files, functions):
    """Every source file named in docs/ARCHITECTURE.md, every function it
    names where it says; every folder in the README's layout table."""
    problems = []
    arch_path = os.path.join(root, "docs", "ARCHITECTURE.md")
    readme_path = os.path.join(root, "README.md")
    if os.path.exists(arch_path):
        arch = open(arch_path, encoding="utf-8").read()
        if os.path.exists(readme_path):   # a planted test tree has no tables to keep
            for path in files:
                named = f"`{os.path.basename(path)}`" in arch or f"`{path}`" in arch
                if path not in ("model.c", "model.h", "train.c") and not named:
                    problems.append(f"{path}: not described in docs/ARCHITECTURE.md")
        problems += check_named_functions(root, arch, files, functions)
    if os.path.exists(readme_path):
        readme = open(readme_path, encoding="utf-8").read()
        layout = readme[readme.find("## Layout"):]
        for folder, _ in LAYERS:
            if folder != "train" and f"`{folder}/`" not in layout:
                problems.append(f"{folder}/: missing from the README's layout table")
    return problems


def defines(root, path, name):
    """1 when path (a .c or .h) defines or declares function or macro name."""
    full = os.path.join(root, path)
    if not os.path.exists(full):
        return False
    text = strip_code(open(full, encoding="utf-8").read())
    return re.search(r"\b" + re.escape(name) + r"\s*\(", text) is not None and (
        path.endswith(".h") or any(n == name for n, _, _ in top_level_definitions(text)))


def check_named_functions(root, arch, files, functions):
    """A function ARCHITECTURE.md names must exist: in the file the sentence
    or table row names for it (`name` ... in `path`; a row's own files),
    else anywhere in the tree. A name counts as a function when it is
    written `name()`, or is a snake_case name the tree defines or declares."""
    public, static = functions
    known = set(public) | {n for names in static.values() for n in names}
    problems = []
    folder = ""
    units, paragraph = [], None   # table rows alone; prose joined into paragraphs
    for no, line in enumerate(arch.split("\n"), 1):
        if line.strip() and not line.startswith(("#", "|", "```")):
            paragraph = paragraph or [no, []]
            paragraph[1].append(line.strip())
            continue
        if paragraph:
            units.append((paragraph[0], " ".join(paragraph[1])))
            paragraph = None
        units.append((no, line))
    if paragraph:
        units.append((paragraph[0], " ".join(paragraph[1])))
    for no, line in units:
        heading = re.match(r"#+ .*?`?(\w+)/`?", line)
        if line.startswith("#"):
            folder = heading.group(1) if heading else ""
            continue
        if line.startswith("|"):   # a table row: its files are in the first cell
            cells = line.split("|")
            row_files = []
            for f in re.findall(r"`([\w./]+\.[ch])`", cells[1] if len(cells) > 1 else ""):
                row_files.append(f if "/" in f or not folder or folder == "model" and f.startswith("model.")
                                 else f"{folder}/{f}")
            chunks = [(" ".join(cells[2:]), row_files)]
        else:
            chunks = [(c, None) for c in re.split(r";|\.\s", line)]
        for chunk, where in chunks:
            # "`a` (or `b`) in `dir/file.c`": the names before the file (and after an earlier one) are in it
            places = list(re.finditer(r"\bin\s+`([\w./]+\.[ch])`", chunk))
            for m in re.finditer(r"`(\w+)(\(\))?`", chunk):
                name, called = m.group(1), m.group(2)
                if not called and not (re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", name) and name in known):
                    if not (re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)+", name) and "(" in chunk[m.end():m.end() + 1]):
                        continue
                place = next((p for p in places if p.start() > m.start()), None)
                targets = [place.group(1)] if place else where or []
                if targets:
                    if not any(defines(root, t, name) or defines(root, t[:-2] + ".h", name) for t in targets):
                        problems.append(f"docs/ARCHITECTURE.md:{no}: names `{name}` in {' or '.join(targets)}, "
                                        "which does not define it" + (f" (it is in {', '.join(sorted(public[name]))})"
                                                                       if name in public else ""))
                elif name not in known:
                    problems.append(f"docs/ARCHITECTURE.md:{no}: names `{name}`, which no source file defines")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files, problems = check(root)
    for p in problems:
        print("FAIL " + p)
    print(f"checked the includes, calls, error reporting and documented names of {len(files)} files in "
          f"{len(LAYERS)} layers: "
          f"{len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
