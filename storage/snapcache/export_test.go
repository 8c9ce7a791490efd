package snapcache

// ZooKeeperAddr returns the address of the ZooKeeper server TestMain
// started, for the tests of package snapcache_test.
func ZooKeeperAddr() string { return zkAddr }
