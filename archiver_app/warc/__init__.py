"""WARC reading and writing: rolling writer, revisit dedup, read at offset, SURT, CDXJ, WACZ."""
