module wharf.example/go-roman

go 1.27
