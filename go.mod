module github.com/hadrill/hadrill

go 1.26.8

require (
	github.com/go-sql-driver/mysql v1.10.1
	github.com/spf13/cobra v1.10.2
	golang.org/x/sys v0.49.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
