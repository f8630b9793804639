; Every comment: the analysis reads shape comments such as `# (B, T, C)`,
; and the fixture runner reads expectations from them.

(comment) @comment
