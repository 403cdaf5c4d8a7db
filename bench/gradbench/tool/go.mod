module kscgradbench

go 1.22
