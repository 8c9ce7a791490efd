package storage

// A store that wraps another must offer the optional interfaces its inner
// store offers, and no others: the assembly gives the registry the paths
// the outermost store offers (FastPathsOf), and a wrapper that hid one
// would lose that path. The
// wrappers build their plain methods and their versions of the optional
// ones, and these functions put them together into one value that offers
// exactly the optional interfaces given.

// SnapshotExtras are the optional interfaces of a SnapshotStore; a nil
// field is one not offered.
type SnapshotExtras struct {
	Linear  LinearReads
	Cached  CachedSnapshots
	Absence AbsenceHints
}

// SnapshotExtrasOf returns the optional interfaces s offers.
func SnapshotExtrasOf(s SnapshotStore) SnapshotExtras {
	var x SnapshotExtras
	x.Linear, _ = s.(LinearReads)
	x.Cached, _ = s.(CachedSnapshots)
	x.Absence, _ = s.(AbsenceHints)
	return x
}

// FastPaths are the optional interfaces of a pair of stores, the ways the
// registry may read without a store's plain methods: a nil field is one
// not offered. The registry takes them as given (producer.Config) and never
// asks a store's type for them, so that a test or an assembly says which
// paths it means to run.
type FastPaths struct {
	SnapshotExtras
	Files CachedFiles
}

// FastPathsOf returns the optional interfaces snapshots and files offer:
// what an assembly gives the registry for the stores it built.
func FastPathsOf(snapshots SnapshotStore, files FileStore) FastPaths {
	p := FastPaths{SnapshotExtras: SnapshotExtrasOf(snapshots)}
	p.Files, _ = files.(CachedFiles)
	return p
}

// WithSnapshotExtras returns base with the optional interfaces of x: the
// result offers SnapshotStore's methods (base's) and exactly the
// interfaces whose field in x is set, nothing else of base's.
func WithSnapshotExtras(base SnapshotStore, x SnapshotExtras) SnapshotStore {
	type (
		l = LinearReads
		c = CachedSnapshots
		a = AbsenceHints
	)
	switch {
	case x.Linear != nil && x.Cached != nil && x.Absence != nil:
		return struct {
			SnapshotStore
			l
			c
			a
		}{base, x.Linear, x.Cached, x.Absence}
	case x.Linear != nil && x.Cached != nil:
		return struct {
			SnapshotStore
			l
			c
		}{base, x.Linear, x.Cached}
	case x.Linear != nil && x.Absence != nil:
		return struct {
			SnapshotStore
			l
			a
		}{base, x.Linear, x.Absence}
	case x.Cached != nil && x.Absence != nil:
		return struct {
			SnapshotStore
			c
			a
		}{base, x.Cached, x.Absence}
	case x.Linear != nil:
		return struct {
			SnapshotStore
			l
		}{base, x.Linear}
	case x.Cached != nil:
		return struct {
			SnapshotStore
			c
		}{base, x.Cached}
	case x.Absence != nil:
		return struct {
			SnapshotStore
			a
		}{base, x.Absence}
	}
	return struct{ SnapshotStore }{base}
}

// FilesAndOrphans is a FileStore that is also the OrphanStore over the
// same files, as remote and memstore are.
type FilesAndOrphans interface {
	FileStore
	OrphanStore
}

// WithFileExtras returns base offering CachedFiles when cached is set,
// and nothing else of base's beyond FileStore.
func WithFileExtras(base FileStore, cached CachedFiles) FileStore {
	if cached != nil {
		return struct {
			FileStore
			CachedFiles
		}{base, cached}
	}
	return struct{ FileStore }{base}
}

// WithFileAndOrphanExtras is WithFileExtras for a store that is also an
// OrphanStore.
func WithFileAndOrphanExtras(base FilesAndOrphans, cached CachedFiles) FilesAndOrphans {
	if cached != nil {
		return struct {
			FilesAndOrphans
			CachedFiles
		}{base, cached}
	}
	return struct{ FilesAndOrphans }{base}
}
