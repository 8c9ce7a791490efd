package producer

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestOpCounter runs in a synctest bubble: the timeout passes on the
// bubble's clock, and synctest.Wait makes sure the waiter has really run
// before the test asserts it has not returned.
func TestOpCounter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var c opCounter
		if err := c.Wait(context.Background()); err != nil {
			t.Fatalf("idle counter: %v", err)
		}
		c.Add()
		c.Add()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond) // on the bubble's clock
		defer cancel()
		if err := c.Wait(ctx); err == nil {
			t.Fatal("Wait returned while two operations run")
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait(context.Background()) }()
		c.Done()
		synctest.Wait() // the waiter has seen the Done and, rightly, still waits
		select {
		case <-done:
			t.Fatal("Wait returned while one operation runs")
		default:
		}
		c.Done()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		c.Add() // reusable after going idle
		c.Done()
		if err := c.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
