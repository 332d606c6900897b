package main

import "github.com/luagen/luagen/internal/evalcmd"

func init() {
	register(&command{
		name:  "eval",
		args:  "[--init FILE] [--resp3] [--redis ADDR] [--check-keys] [--timeout D] [--any-arity] script.lua [key ...] [, arg ...]",
		short: "run a script offline (or on --redis ADDR) and print the reply as redis-cli --eval does",
		run: func(e *env, args []string) int {
			return evalcmd.Run(args, e.stdout, e.stderr)
		},
	})
}
