"""html_sort_check.py self PAGE.html | click PAGE.html OUT.html | sorted PAGE.html DOM.html

self: the page references nothing outside itself, and its only scripts are inline ones whose
SHA-256 the Content-Security-Policy names (anything else would be refused or fetch something).
click: write OUT.html, the page plus a script (allowed by its hash) that clicks the second header
of every sortable table once, as a reader would.
sorted: DOM.html (Chromium's --dump-dom of OUT.html) has each sortable table's rows in descending
order of that column (data-v, else the cell's number, else its text) and at least one table's
rows in another order than PAGE.html's: the click sorted them."""
import base64
import hashlib
import html.parser
import re
import sys

CLICK = ("document.querySelectorAll('table.sortable').forEach(function(t){"
         "var h=t.rows[0].cells;if(h.length>1)h[1].click()})")


def sha(s):
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()


def scripts(text):
    return re.findall(r"<script>(.*?)</script>", text, re.S)


def check_self(text):
    bad = re.findall(r"<script[^>]|<link|<img|<iframe|src=|href=|@import|url\(", text)
    assert not bad, "references outside the page: %s" % bad
    csp = re.search(r'Content-Security-Policy" content="([^"]*)"', text).group(1)
    for s in scripts(text):
        assert sha(s) in csp, "a script whose hash the CSP does not name: %s" % csp


class Tables(html.parser.HTMLParser):
    """Each table.sortable: its rows of cells, a cell as (data-v or None, text)."""

    def __init__(self):
        super().__init__()
        self.tables, self.cur, self.cell = [], None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and "sortable" in (a.get("class") or ""):
            self.cur = []
            self.tables.append(self.cur)
        elif tag == "tr" and self.cur is not None:
            self.cur.append([])
        elif tag in ("td", "th") and self.cur is not None:
            self.cell = [a.get("data-v"), ""]
            self.cur[-1].append(self.cell)

    def handle_endtag(self, tag):
        if tag == "table":
            self.cur = None
        elif tag in ("td", "th"):
            self.cell = None

    def handle_data(self, d):
        if self.cell is not None:
            self.cell[1] += d


def key(cell):
    if cell[0] is not None:
        return (0, float(cell[0]), "")
    m = re.match(r"\s*(-?[0-9.]+)", cell[1])
    return (0, float(m.group(1)), "") if m else (1, 0.0, cell[1].strip())


def tables(text):
    p = Tables()
    p.feed(text)
    return p.tables


def check_sorted(page, dom):
    before, after = tables(page), tables(dom)
    assert len(before) == len(after) and after, "sortable tables: %d, %d" % (len(before), len(after))
    moved = 0
    for b, t in zip(before, after):
        if len(t[0]) < 2 or len(t) < 3:
            continue
        keys = [key(r[1]) for r in t[1:]]
        assert all(x[0] == keys[0][0] for x in keys), "a column mixing numbers and text"
        assert keys == sorted(keys, reverse=True), "not sorted by %r: %s" % (t[0][1][1], keys)
        moved += [[c[1] for c in r] for r in b[1:]] != [[c[1] for c in r] for r in t[1:]]
    assert moved, "no table's rows moved: the click sorted nothing"
    print("ok: %d sortable tables sorted by their second column, %d reordered" % (len(after), moved))


def main():
    what, page = sys.argv[1], open(sys.argv[2]).read()
    if what == "self":
        check_self(page)
    elif what == "click":
        csp = re.search(r"script-src ([^\"]*)", page).group(1)
        out = page.replace(csp, csp + " " + sha(CLICK), 1)
        out = out.replace("</body>", "<script>%s</script></body>" % CLICK, 1)
        open(sys.argv[3], "w").write(out)
    else:
        check_sorted(page, open(sys.argv[3]).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
