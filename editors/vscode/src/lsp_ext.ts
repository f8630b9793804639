// The requests shapels adds to LSP. Their server side is
// server/lsp/src/file_status.rs; keep the two in step.

import * as lc from "vscode-languageclient/node";

export interface FileStatusParams {
  textDocument: lc.TextDocumentIdentifier;
}

export interface UnknownShape {
  name: string;
  range: lc.Range;
}

export interface FileStatus {
  /** The document version the answer describes. */
  version: number;
  /** False when the analysis failed on this version (counts are then 0). */
  analyzed: boolean;
  /** Tensor bindings: one per statement and bound name. */
  tensors: number;
  /** Those with an unknown rank or an unknown (`?`) dim. */
  unknownShapes: number;
  /** The first of them, in source order. */
  unknown: UnknownShape[];
  errors: number;
  warnings: number;
}

/** `null` when the document is not open in the server. */
export const fileStatus = new lc.RequestType<FileStatusParams, FileStatus | null, void>("shapels/fileStatus");

/** Whether the server announced `shapels/fileStatus` (older servers did not). */
export function hasFileStatus(result: lc.InitializeResult | undefined): boolean {
  const experimental = result?.capabilities.experimental as { fileStatusProvider?: unknown } | undefined;
  return experimental?.fileStatusProvider === true;
}
