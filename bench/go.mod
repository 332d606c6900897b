module github.com/luagen/luagen/bench

go 1.26.0

replace github.com/luagen/luagen => ../
