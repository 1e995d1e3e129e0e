/* page_script.h: the script helpers the trace page and the film page share,
 * as a C string spliced into each page's script. */
#ifndef CLI_PAGE_SCRIPT_H
#define CLI_PAGE_SCRIPT_H

/* el(tag, class, text): a new element; add(parent, child): appended, returned. */
#define PAGE_SCRIPT_HELPERS \
    "  function el(tag, cls, text) {\n" \
    "    const e = document.createElement(tag);\n" \
    "    if (cls) e.className = cls;\n" \
    "    if (text !== undefined && text !== null) e.textContent = text;\n" \
    "    return e;\n" \
    "  }\n" \
    "  function add(parent, child) { parent.appendChild(child); return child; }\n"

#endif
