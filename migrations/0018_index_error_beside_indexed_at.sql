-- An archive that cannot be indexed as it is (0011) was passed over by index_error alone, with
-- indexed_at NULL: `UPDATE archives SET indexed_at = NULL`, the whole rebuild the spec names,
-- then left it out, though a rebuild after a mapping change is exactly when a page the old
-- mapping refused may go in. Now indexed_at is the one index state again: the indexer sets it on
-- such an archive too, beside its reason, and reads only indexed_at to choose what to index; a
-- later success clears the reason. So the archives marked so far are set here as the indexer now
-- leaves them, and the rebuild statement takes them with the rest.
UPDATE archives SET indexed_at = now() WHERE index_error IS NOT NULL AND indexed_at IS NULL;
