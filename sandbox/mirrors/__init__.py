"""Mirror tooling: capture live pages and import HAR files into the mirror store's format
(``toolserver.contract.mirrors`` reads and writes it)."""
