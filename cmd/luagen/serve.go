package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/luagen/luagen/luatest"
	"github.com/luagen/luagen/luatest/server"
)

func init() {
	register(&command{
		name:  "serve",
		args:  "[-addr host:port] [-password P] [-keys-check=false]",
		short: "serve luatest's offline Redis 7 over RESP2/RESP3 for redis-cli and other clients",
		long: "Serve answers on -addr (default 127.0.0.1:6379) until interrupted, with luatest's\n" +
			"keyspace, Lua and replies (package github.com/luagen/luagen/luatest/server).\n" +
			"Its clock is the wall clock (luatest.WithWallClock): keys expire as time passes.\n" +
			"The default address is redis-cli's: stop a local redis-server first, or pass -addr.\n" +
			"Scripts fail on keys they were not given in KEYS unless -keys-check=false.",
		run: func(e *env, args []string) int {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(e.stderr)
			addr := fs.String("addr", "127.0.0.1:6379", "address to listen on")
			password := fs.String("password", "", "require AUTH with this password (requirepass)")
			keysCheck := fs.Bool("keys-check", true, "fail a script's command on a key it was not given in KEYS, as luatest does by default (luatest.KeysDeclared); -keys-check=false answers as redis-server does")
			if err := fs.Parse(args); err != nil {
				return exitUsage
			}
			if fs.NArg() > 0 {
				fmt.Fprintf(e.stderr, "luagen serve: unexpected argument %q\n", fs.Arg(0))
				return exitUsage
			}
			stop := e.stop
			if stop == nil {
				ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
				defer cancel()
				stop = ctx.Done()
			}
			ropts := []luatest.Option{luatest.WithWallClock()}
			if !*keysCheck {
				ropts = append(ropts, luatest.WithKeysCheck(luatest.KeysUnchecked))
			}
			r := luatest.New(ropts...)
			defer r.Close()
			opts := []server.Option{server.WithAddr(*addr)}
			if *password != "" {
				opts = append(opts, server.WithPassword(*password))
			}
			srv, err := server.New(r, opts...)
			if err != nil {
				fmt.Fprintln(e.stderr, "luagen serve:", err)
				return exitFail
			}
			fmt.Fprintf(e.stdout, "luatest (Redis 7.0.15) listening on %s\n", srv.Addr())
			<-stop
			if err := srv.Close(); err != nil {
				fmt.Fprintln(e.stderr, "luagen serve:", err)
				return exitFail
			}
			return exitOK
		},
	})
}
