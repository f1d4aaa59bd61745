import { release } from "@phasebound/testkit/contract"
import { registerFamilies } from "./register.js"

registerFamilies([release])
