// A plain UUID in either case: what ids in paths, cursors, shares and search documents are held
// to before they reach a lookup (ajv's `uuid` format alone would also accept a `urn:uuid:` prefix).
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const UUID = new RegExp(UUID_PATTERN);

export const isUuid = (text: string): boolean => UUID.test(text);
