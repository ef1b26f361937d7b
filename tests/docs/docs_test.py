#!/usr/bin/env python3
"""The documentation check (ctest docs_check): README.md is a front page and docs/ the reference.

- README.md has at most 250 lines and starts (after its title) with `make run` and `make test`;
- every docs/*.md page is linked from README.md;
- every relative link and #anchor in README.md and docs/*.md resolves: the file exists, and the
  anchor is a heading of that file by GitHub's rules (or an explicit id/name in its HTML);
- no markdown table row, and no paragraph of three lines or more, appears word for word in two
  pages (one page has the reference, the other links to it).

Usage: docs_test.py [--root=DIR]  (default: the repository this file is in). Exit 0 when every
check passes, 1 with one line per problem (file:line: what is wrong).
"""

import argparse
import os
import re
import sys
import unicodedata
import urllib.parse

MAX_README_LINES = 250

# [text](target) and ![alt](target), not inside code; <img src="..."> and <a href="...">.
LINK_RE = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HTML_LINK_RE = re.compile(r'<(?:img|a)\b[^>]*?\b(?:src|href)="([^"]+)"', re.IGNORECASE)
HTML_ID_RE = re.compile(r'<[a-z][^>]*?\b(?:id|name)="([^"]+)"', re.IGNORECASE)
HEADING_RE = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
FENCE_RE = re.compile(r'^\s*(```|~~~)')


def slug(heading):
    """GitHub's anchor for a heading's text: markup dropped, lower case, punctuation removed
    (letters, digits, marks, '_' and '-' kept), spaces to '-'."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)  # links: their text
    text = re.sub(r'<[^>]+>', '', text)  # inline HTML
    text = text.replace('`', '').replace('*', '')
    text = text.strip().lower()
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in '-_' or cat[0] in 'LN' or cat in ('Mn', 'Mc'):
            out.append(ch)
        elif ch == ' ':
            out.append('-')
    return ''.join(out)


def read_lines(path):
    with open(path, encoding='utf-8') as f:
        return f.read().split('\n')


def outside_code(lines):
    """(line number, line) of the lines outside fenced code blocks, inline code blanked."""
    fence = None
    for number, line in enumerate(lines, 1):
        m = FENCE_RE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, re.sub(r'`[^`]*`', lambda c: ' ' * len(c.group(0)), line)


def anchors(lines):
    """Every anchor a file has: its headings' slugs (duplicates numbered as GitHub numbers them)
    and explicit HTML ids."""
    seen = {}
    result = set()
    for _, line in outside_code(lines):
        for m in HTML_ID_RE.finditer(line):
            result.add(m.group(1))
    fence = None
    for line in lines:
        m = FENCE_RE.match(line)
        if m:
            fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
            continue
        if fence is not None:
            continue
        h = HEADING_RE.match(line)
        if not h:
            continue
        base = slug(h.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else f'{base}-{n}')
    return result


def links(lines):
    for number, line in outside_code(lines):
        for regex in (LINK_RE, HTML_LINK_RE):
            for m in regex.finditer(line):
                yield number, m.group(1)


def check_links(root, pages, problems):
    anchor_cache = {}

    def anchors_of(path):
        if path not in anchor_cache:
            anchor_cache[path] = anchors(read_lines(path))
        return anchor_cache[path]

    for page in pages:
        path = os.path.join(root, page)
        for number, target in links(read_lines(path)):
            if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.IGNORECASE):
                continue  # http:, https:, mailto:
            file_part, _, fragment = target.partition('#')
            file_part = urllib.parse.unquote(file_part)
            if file_part:
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if not resolved.startswith(os.path.normpath(root) + os.sep) and resolved != root:
                    problems.append(f'{page}:{number}: link {target!r} leaves the repository')
                    continue
                if not os.path.exists(resolved):
                    problems.append(f'{page}:{number}: link {target!r}: no such file')
                    continue
            else:
                resolved = path
            if fragment:
                if not resolved.endswith('.md'):
                    problems.append(f'{page}:{number}: link {target!r}: an anchor into a file '
                                    'that is not markdown')
                elif urllib.parse.unquote(fragment) not in anchors_of(resolved):
                    problems.append(f'{page}:{number}: link {target!r}: '
                                    f'{os.path.relpath(resolved, root)} has no heading '
                                    f'#{fragment}')


def check_readme(root, docs, problems):
    lines = read_lines(os.path.join(root, 'README.md'))
    if lines and lines[-1] == '':
        lines = lines[:-1]
    if len(lines) > MAX_README_LINES:
        problems.append(f'README.md: {len(lines)} lines, over {MAX_README_LINES}: the reference '
                        'belongs in docs/')
    # The title, then the two commands first.
    body = [l for l in lines[1:] if l.strip()]
    commands = [l.split('#')[0].strip() for l in body[1:3]] if body[:1] == ['```sh'] else []
    if commands != ['make run', 'make test']:
        problems.append('README.md: does not start with the two commands (`make run`, '
                        '`make test`) in a ```sh block right under its title')
    linked = set()
    for _, target in links(lines):
        file_part = target.partition('#')[0]
        if file_part.startswith('docs/') and file_part.endswith('.md'):
            linked.add(file_part)
    for page in docs:
        if page not in linked:
            problems.append(f'{page}: not linked from README.md')


def blocks(lines):
    """Table rows and paragraphs (runs of non-blank lines outside code that are neither
    headings, list items' starts nor table rows) with their first line number."""
    fence = None
    paragraph = []
    start = 0
    for number, line in enumerate(lines, 1):
        m = FENCE_RE.match(line)
        if m:
            fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
            paragraph = []
            continue
        if fence is not None:
            continue
        stripped = line.strip()
        if stripped.startswith('|'):
            # A header row (the one above the |---| line) may well be shared: not checked.
            following = lines[number].strip() if number < len(lines) else ''
            if not re.fullmatch(r'[|:\- ]+', stripped) and not (
                    following.startswith('|') and re.fullmatch(r'[|:\- ]+', following)):
                yield 'table row', number, stripped
            continue
        if not stripped or HEADING_RE.match(stripped):
            if len(paragraph) >= 3:
                yield 'paragraph', start, ' '.join(paragraph)
            paragraph = []
            continue
        if not paragraph:
            start = number
        paragraph.append(stripped)
    if len(paragraph) >= 3:
        yield 'paragraph', start, ' '.join(paragraph)


def check_duplicates(root, pages, problems):
    first = {}
    for page in pages:
        for kind, number, text in blocks(read_lines(os.path.join(root, page))):
            key = re.sub(r'\s+', ' ', text)
            if key in first and first[key][0] != page:
                other, other_line = first[key]
                problems.append(f'{page}:{number}: this {kind} is also {other}:{other_line}: '
                                'keep it in one page and link to it')
            else:
                first.setdefault(key, (page, number))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--root', default=os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    root = os.path.abspath(parser.parse_args().root)
    docs = sorted('docs/' + name for name in os.listdir(os.path.join(root, 'docs'))
                  if name.endswith('.md'))
    pages = ['README.md'] + docs
    problems = []
    check_readme(root, docs, problems)
    check_links(root, pages, problems)
    check_duplicates(root, pages, problems)
    for problem in problems:
        print(problem)
    if problems:
        print(f'FAIL: {len(problems)} problem(s) in README.md and docs/')
        return 1
    print(f'OK: README.md and {len(docs)} pages of docs/: links, anchors, no repeated tables')
    return 0


if __name__ == '__main__':
    sys.exit(main())
