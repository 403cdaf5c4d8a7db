module gmmhost

go 1.22
