; Syntax errors: spans the parser could not fit into the grammar, and tokens
; it had to assume (such as a `)` never written). Nested matches are pruned
; in code so each problem is reported once.

(ERROR) @error

(MISSING) @missing
