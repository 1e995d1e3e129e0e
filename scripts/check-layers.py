#!/usr/bin/env python3
"""check-layers.py: the include order of docs/ARCHITECTURE.md, checked.

Every quoted #include in the program's sources must point one way: to a
header of the same folder or of a folder lower in LAYERS. Folders that share
a rank (model, text, report) know nothing of each other. Within a folder,
the includes between modules (x.c and x.h count as one module) must not
form a cycle. Prints each violation naming both files; exits 1 on any.
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
    problems += check_docs(root, files)
    return files, problems


def check_docs(root, files):
    """Every source file named in docs/ARCHITECTURE.md, every folder in the README's layout table."""
    problems = []
    arch_path = os.path.join(root, "docs", "ARCHITECTURE.md")
    readme_path = os.path.join(root, "README.md")
    if not os.path.exists(arch_path) or not os.path.exists(readme_path):
        return problems   # a planted test tree
    arch = open(arch_path, encoding="utf-8").read()
    for path in files:
        named = f"`{os.path.basename(path)}`" in arch or f"`{path}`" in arch
        if path not in ("model.c", "model.h", "train.c") and not named:
            problems.append(f"{path}: not described in docs/ARCHITECTURE.md")
    readme = open(readme_path, encoding="utf-8").read()
    layout = readme[readme.find("## Layout"):]
    for folder, _ in LAYERS:
        if folder != "train" and f"`{folder}/`" not in layout:
            problems.append(f"{folder}/: missing from the README's layout table")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files, problems = check(root)
    for p in problems:
        print("FAIL " + p)
    print(f"checked the includes of {len(files)} files in {len(LAYERS)} layers: "
          f"{len(problems)} problem{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
