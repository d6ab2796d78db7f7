from pisess.cli.app import console

if __name__ == "__main__":
    console()
