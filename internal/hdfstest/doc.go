// Package hdfstest runs a real HDFS for tests: Hadoop's released
// MiniDFSCluster (a NameNode and DataNodes in one JVM, the servers a
// cluster runs) from org.apache.hadoop:hadoop-client-minicluster, resolved
// from Maven Central by maven/hadoop-3.4.0/pom.xml and
// scripts/resolve-maven.sh. Every server binds 127.0.0.1: the NameNode's
// RPC port is a free port picked here (kept across a NameNode restart),
// its HTTP port and the DataNodes' ports are chosen by the kernel on
// loopback.
//
// A small Java main (java/MiniHdfs.java, compiled with javac on first use
// into .deps/hdfstest/<hash>) starts the cluster and takes commands on its
// stdin: stop and start a DataNode or the NameNode, enter and leave safe
// mode, set a space quota, and read, write and list files with Hadoop's own
// client. The process is a group of its own, stopped by pid; it also ends
// when its stdin closes, so a test binary that dies takes it along.
//
// Shared gives one cluster per test binary; StopShared (from TestMain)
// ends it. It is for tests only.
package hdfstest
