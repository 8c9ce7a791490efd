package zkstore

// ZooKeeperAddr returns the address of the ZooKeeper server TestMain
// started, for the tests of package zkstore_test.
func ZooKeeperAddr() string { return zkAddr }
