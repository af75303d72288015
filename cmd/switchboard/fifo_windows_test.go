package main

import "errors"

func mkfifo(string) error { return errors.New("mkfifo: Windows has no FIFOs") }
