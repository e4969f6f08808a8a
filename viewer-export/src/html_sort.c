/* viewer-export/src/html_sort.c: what makes the report's tables sortable (click a header: largest
 * first, again: smallest first) and the time cells they sort on. The page allows no script but
 * this one, by its hash in the Content-Security-Policy (tests/export/test_html_chromium.sh checks
 * that the hash is the script's: a wrong one is refused and logged on the console). A cell with
 * data-v sorts by it (times: ns), else by its number, else by its text. */
#include "gp/report.h"
#include "html_int.h"

const char html_sort_js[] =
        "function gpKey(td){var v=td.getAttribute('data-v');if(v!==null)return +v;var t=td.textCo"
        "ntent.trim(),n=parseFloat(t);return isNaN(n)?t:n}\n"
        "document.querySelectorAll('table.sortable').forEach(function(tb){var hd=tb.rows[0];Array"
        ".prototype.forEach.call(hd.cells,function(th,i){th.title='click to sort';th.addEventList"
        "ener('click',function(){var up=th.getAttribute('data-sort')==='desc',rows=Array.prototyp"
        "e.slice.call(tb.rows,1);Array.prototype.forEach.call(hd.cells,function(c){c.removeAttrib"
        "ute('data-sort')});th.setAttribute('data-sort',up?'asc':'desc');rows.sort(function(x,y){"
        "var a=gpKey(x.cells[i]),b=gpKey(y.cells[i]),c=typeof a==='number'&&typeof b==='number'?a"
        "-b:String(a).localeCompare(String(b));return up?c:-c});rows.forEach(function(r){r.parent"
        "Node.appendChild(r)})})})})\n";

/* base64 of the SHA-256 of html_sort_js */
const char html_sort_js_sha256[] = "Vn4ngiU0imfPb+5z9VmbjyGYPGGnwlh1AH0UTcC34Ak=";

void html_td_time(export_out *o, int64_t ns)
{
    char t[32];
    export_out_printf(o, "<td data-v=\"%lld\">%s</td>", (long long)ns,
                      gp_report_fmt_time(t, sizeof t, ns));
}
