package sidecar

// Fluss api keys the sidecar serves (wire.md §5).
const (
	KeyAPIVersions             int16 = 1000
	KeyGetMetadata             int16 = 1012
	KeyAuthenticate            int16 = 1038
	KeyRegisterProducerOffsets int16 = 1053
	KeyGetProducerOffsets      int16 = 1054
	KeyDeleteProducerOffsets   int16 = 1055
)
