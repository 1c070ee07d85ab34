package row

// NewAliasDecoder decodes from s without copying: the strings it reads
// are substrings of s, so values decoded from one string of many
// encoded rows cost no allocation each (a batch decoded at once).
func NewAliasDecoder(s string) *Decoder { return itemDecoder(s) }
