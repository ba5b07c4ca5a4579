#!/usr/bin/env python3
"""Import circles and file sizes of the core (`ecs-core/src`).

Builds the file-level import graph of the core crate: one node per source
file, an arrow from a file to each file that defines an item it imports.
By default the paths read are those of the file's `use` declarations that
begin with `crate::` or `super::`, outside comments, string literals and
test-only code (`#[cfg(test)]` or `#[cfg(all(test, ..))]` items such as
`mod tests { .. }`, and the files such modules load). A path is traced
through the module tree to the file that defines its item, following the
crate root's re-exports (`crate::World` -> `world/mod.rs`); a path into a
folder (`crate::query::QueryIter`) stops at that folder's `mod.rs`, which
is the folder's public face, and a path that names a module is an arrow to
that module's file. This is the count the layers are held to.

Two stricter readings:
- `--deep` also follows the re-exports of every `mod.rs` to the defining
  file (`crate::query::QueryIter` -> `query/iter.rs`) and reads relative
  paths (`use plan::X`, `pub use iter::QueryIter`): then `World::query`,
  which stays in World's module for the compiler's notes, closes a circle
  between `world/` and `query/`;
- `--all-paths` also reads the paths written inside the code (`fn(&mut
  crate::World)`); with `--deep` too, the arrows that `layer_rules.rs`
  lists (the `Component` trait names `World`) close one circle through
  most layers.

It then finds the strongly connected components of the graph (Tarjan) and
prints each circle (a component of more than one file) with its files, the
arrows that close it, and whether it crosses a folder: a circle whose files
are all in one top-level folder of `src/` is that layer's own business, one
that spans two folders is a knot between layers.

Last, the line count of every file: all lines, and the lines outside its
tests (a `#[cfg(test)] mod tests { .. }` block, any test-only item),
largest first, marking those over the limit (1,000 by default).

    python3 scripts/import_circles.py                 # circles and sizes
    python3 scripts/import_circles.py --deep          # follow every mod.rs re-export
    python3 scripts/import_circles.py --all-paths     # also paths inside code
    python3 scripts/import_circles.py --edges         # also every arrow
    python3 scripts/import_circles.py --check         # exit 1 on a circle that crosses a folder
                                                      # or a file over the limit

The reading is textual, not a compiler's: macros are not expanded, and a
name defined in more than one file of a module resolves to the module's own
file. It is meant to be exact for this crate's style (one `use` tree per
statement, items defined at file level).
"""

import argparse
import os
import re
import sys
from collections import defaultdict

SRC_DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ecs-core", "src")
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


# ---------------------------------------------------------------- reading


def strip_comments_and_strings(text):
    """The source with comments removed and string/char literals emptied,
    keeping line breaks so line numbers stay."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'b?r(#*)"', text[i:i + 12])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = '"' + m.group(1)
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
            continue
        if c == "'":
            # A char literal ('a', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                out.append("' '")
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def item_end(code, start):
    """Index just past the item that begins at `start`: its `;` at depth 0,
    or the `}` that closes its first brace block."""
    depth, i, n = 0, start, len(code)
    while i < n:
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0 and c == "}":
                return i + 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    return n


# `#[cfg(test)]`, and `#[cfg(all(test, ...))]`, which is test-only too.
CFG_TEST = re.compile(r"#\[cfg\((?:test|all\([^\]]*\btest\b[^\]]*\))\)\]")


def test_spans(code):
    """(start, end, module name or None) of every `#[cfg(test)]` item."""
    spans = []
    for m in CFG_TEST.finditer(code):
        j = m.end()
        # Further attributes of the same item.
        while True:
            k = re.match(r"\s*#\[", code[j:])
            if not k:
                break
            j = item_end(code, j + k.end() - 1)  # past the attribute's `]`
            j = code.index("]", j - 1) + 1 if code[j - 1] != "]" else j
        end = item_end(code, j)
        mod = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;", code[j:end])
        spans.append((m.start(), end, mod.group(1) if mod else None))
    return spans


def without_tests(code):
    """`code` with its `#[cfg(test)]` items blanked (line breaks kept)."""
    spans = test_spans(code)
    out, last = [], 0
    for start, end, _ in spans:
        if start < last:
            continue
        out.append(code[last:start])
        out.append("\n" * code.count("\n", start, end))
        last = end
    out.append(code[last:])
    return "".join(out)


# ---------------------------------------------------------------- the module tree


class Module:
    def __init__(self, path, file, code):
        self.path = path  # tuple of segments from the crate root
        self.file = file  # relative to src/
        self.code = code  # without comments, strings and test items
        self.children = set()
        self.defs = set()  # names of items defined here
        self.reexports = {}  # name -> absolute path (tuple) it re-exports
        self.globs = []  # absolute module paths glob-imported with `pub use`
        self.uses = []  # (absolute path tuple, is_pub, line, from crate:: or super::) of every `use`


def module_path_of(file):
    parts = file[:-3].split("/")
    if parts == ["lib"]:
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def test_only_files(src, files):
    """Files loaded only by a `#[cfg(test)] mod name;` (`world/tests.rs`),
    and by `#[cfg(test)] mod` in `lib.rs` (`layer_rules.rs`)."""
    skipped = set()
    for file in files:
        code = strip_comments_and_strings(open(os.path.join(src, file), encoding="utf-8").read())
        base = os.path.dirname(file) if file.endswith("mod.rs") or file == "lib.rs" else file[:-3]
        for _, _, name in test_spans(code):
            if name:
                for candidate in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
                    skipped.add(os.path.normpath(candidate).replace(os.sep, "/"))
    return skipped


def parse_use_tree(text):
    """Expands a use tree (`a::{b, c::{d as e, self}, f::*}`) into
    (path tuple, local name, or '*' for a glob)."""
    tokens = re.findall(IDENT + r"|\$crate|::|\{|\}|,|\*", text)
    results = []
    pos = 0

    def tree(prefix):
        nonlocal pos
        segs = []
        while pos < len(tokens):
            t = tokens[pos]
            if t == "{":
                pos += 1
                while pos < len(tokens) and tokens[pos] != "}":
                    if tokens[pos] == ",":
                        pos += 1
                        continue
                    tree(prefix + segs)
                pos += 1  # the `}`
                return
            if t == "*":
                pos += 1
                results.append((tuple(prefix + segs), "*"))
                return
            if t in (",", "}"):
                break
            if t == "::":
                pos += 1
                continue
            if t == "as":
                pos += 2
                full = prefix + segs
                if full and full[-1] == "self":
                    full = full[:-1]
                results.append((tuple(full), tokens[pos - 1]))
                return
            segs.append(t)
            pos += 1
        full = prefix + segs
        if full and full[-1] == "self":
            full = full[:-1]
        if full:
            results.append((tuple(full), full[-1]))

    tree([])
    return results


USE_STMT = re.compile(r"(?:(?<=[;{}\]\n])|^)\s*(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]*);", re.M)
DEF_ITEM = re.compile(
    r"\b(?:struct|enum|union|trait|type|fn|const|static|mod)\s+(" + IDENT + r")"
    r"|\bmacro_rules!\s*(" + IDENT + r")"
)
EXTERN_ROOTS = {"std", "core", "alloc", "hashbrown", "rayon", "serde", "log", "tracing", "archetable_macros"}


def absolute(module, segs):
    """The absolute path of `segs` as written in `module` (tuple), or None
    for a path into another crate."""
    if not segs:
        return None
    head = segs[0]
    if head in ("crate", "$crate", "archetable_core"):
        return tuple(segs[1:])
    if head == "self":
        return module.path + tuple(segs[1:])
    if head == "super":
        base = list(module.path)
        rest = list(segs)
        while rest and rest[0] == "super":
            base = base[:-1]
            rest = rest[1:]
        return tuple(base) + tuple(rest)
    if head in EXTERN_ROOTS:
        return None
    if head in module.children:
        return module.path + tuple(segs)
    return None


def load(src):
    files = []
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                files.append(os.path.relpath(os.path.join(root, name), src).replace(os.sep, "/"))
    skipped = test_only_files(src, files)
    modules = {}
    for file in sorted(files):
        if file in skipped:
            continue
        raw = open(os.path.join(src, file), encoding="utf-8").read()
        code = without_tests(strip_comments_and_strings(raw))
        modules[module_path_of(file)] = Module(module_path_of(file), file, code)
    for path, module in modules.items():
        if path:
            parent = modules.get(path[:-1])
            if parent:
                parent.children.add(path[-1])
    for module in modules.values():
        for m in DEF_ITEM.finditer(module.code):
            module.defs.add(m.group(1) or m.group(2))
        for m in USE_STMT.finditer(module.code):
            is_pub = m.group(1) is not None
            line = module.code.count("\n", 0, m.start(2)) + 1
            for segs, local in parse_use_tree(m.group(2)):
                path = absolute(module, list(segs))
                if path is None:
                    continue
                rooted = segs[0] in ("crate", "$crate", "archetable_core", "super")
                module.uses.append((path, is_pub, line, rooted))
                if is_pub:
                    if local == "*":
                        module.globs.append(path)
                    elif local:
                        module.reexports[local] = path
    return modules


def resolve(modules, path, deep, depth=0):
    """The file that defines the item at absolute `path`: re-exports are
    followed in `lib.rs`, and with `deep` in every module."""
    if depth > 20:
        return None
    # Longest prefix that is a module.
    k = len(path)
    while k > 0 and tuple(path[:k]) not in modules:
        k -= 1
    module = modules.get(tuple(path[:k]))
    if module is None:
        return None
    rest = path[k:]
    if not rest:
        return module.file
    name = rest[0]
    if not (deep or module.path == ()):
        return module.file
    if name in module.reexports and name not in module.defs:
        target = module.reexports[name]
        found = resolve(modules, tuple(target) + tuple(rest[1:]), deep, depth + 1)
        if found:
            return found
    if name not in module.defs:
        for glob in module.globs:
            found = resolve(modules, tuple(glob) + tuple(rest), deep, depth + 1)
            if found and found != modules.get(tuple(glob), module).file:
                return found
    return module.file


INLINE_PATH = re.compile(r"(?<![A-Za-z0-9_:])(\$?crate|super|self)((?:\s*::\s*(?:" + IDENT + r"|\{))+)")


def inline_paths(module):
    """Paths written in the code outside `use` declarations."""
    code = USE_STMT.sub(lambda m: "\n" * m.group(0).count("\n"), module.code)
    for m in INLINE_PATH.finditer(code):
        segs = [m.group(1)] + [s for s in re.split(r"\s*::\s*", m.group(2)) if s and s != "{"]
        if segs[0] == "self" and len(segs) > 1 and segs[1] not in module.children:
            continue  # `self::method`-like uses are not module paths
        path = absolute(module, segs)
        if path is not None:
            yield path, code.count("\n", 0, m.start()) + 1


def graph(modules, all_paths, deep):
    edges = defaultdict(dict)  # file -> {file: (line, path)}
    for module in modules.values():
        found = [(p, line) for p, _, line, rooted in module.uses if rooted or deep]
        if all_paths:
            found += list(inline_paths(module))
        for path, line in found:
            target = resolve(modules, path, deep)
            if target and target != module.file and target not in edges[module.file]:
                edges[module.file][target] = (line, "::".join(path))
    return edges


def circles(nodes, edges):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, on, stack, result = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                result.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(result, key=lambda c: (-len(c), c))


def folder_of(file):
    return file.split("/")[0] if "/" in file else "(root)"


# ---------------------------------------------------------------- sizes


def sizes(src):
    rows = []
    for root, _, names in os.walk(src):
        for name in names:
            if not name.endswith(".rs"):
                continue
            full = os.path.join(root, name)
            file = os.path.relpath(full, src).replace(os.sep, "/")
            raw = open(full, encoding="utf-8").read()
            total = raw.count("\n") + (0 if raw.endswith("\n") or not raw else 1)
            code = strip_comments_and_strings(raw)
            test_lines = 0
            last = 0
            for start, end, _ in test_spans(code):
                if start < last:
                    continue
                # Whole lines from the attribute's line to the item's last line.
                first = code.count("\n", 0, start)
                final = code.count("\n", 0, end)
                test_lines += final - first + 1
                last = end
            rows.append((file, total, total - test_lines))
    return rows


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=SRC_DEFAULT, help="the crate's src/ folder")
    ap.add_argument("--all-paths", action="store_true", help="count paths inside the code, not only `use`")
    ap.add_argument("--deep", action="store_true", help="follow the re-exports of every mod.rs, not only lib.rs")
    ap.add_argument("--edges", action="store_true", help="print every arrow")
    ap.add_argument("--limit", type=int, default=1000, help="lines outside tests a file may have")
    ap.add_argument("--top", type=int, default=15, help="how many of the largest files to list")
    ap.add_argument("--check", action="store_true", help="exit 1 on a crossing circle or an oversized file")
    args = ap.parse_args()
    src = os.path.normpath(args.src)

    modules = load(src)
    edges = graph(modules, args.all_paths, args.deep)
    files = [m.file for m in modules.values()]
    found = circles(files, edges)

    mode = "use declarations and paths in code" if args.all_paths else "use declarations"
    mode += ", re-exports followed in every module" if args.deep else ", re-exports followed in lib.rs"
    print(f"import graph of {src} ({mode}): {len(files)} files, {sum(len(e) for e in edges.values())} arrows")
    if args.edges:
        for f in sorted(edges):
            for t in sorted(edges[f]):
                line, path = edges[f][t]
                print(f"  {f} -> {t}    ({f}:{line} {path})")
    crossing = 0
    print(f"\ncircles: {len(found)}")
    for n, comp in enumerate(found, 1):
        folders = sorted({folder_of(f) for f in comp})
        crosses = len(folders) > 1
        crossing += crosses
        verdict = "CROSSES folders " + ", ".join(folders) if crosses else "inside " + folders[0] + "/"
        print(f"  {n}. {len(comp)} files, {verdict}")
        members = set(comp)
        for f in comp:
            inside = sorted(t for t in edges.get(f, {}) if t in members)
            print(f"       {f} -> {', '.join(inside)}")
    print(f"circles that cross a folder: {crossing}")

    rows = sorted(sizes(src), key=lambda r: -r[2])
    over = [r for r in rows if r[2] > args.limit]
    print(f"\nlargest files (lines: all / outside tests), limit {args.limit} outside tests:")
    for file, total, outside in rows[: args.top]:
        flag = "  OVER" if outside > args.limit else ""
        print(f"  {outside:6} {total:6}  {file}{flag}")
    print(f"files over the limit: {len(over)}")
    if args.check and (crossing or over):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
